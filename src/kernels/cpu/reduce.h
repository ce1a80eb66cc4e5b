#pragma once
// Sum and mean over the middle dim of an [outer, n, inner] view (reductions over one contiguous
// run of axes: ReduceMean over the last axis in spelled-out LayerNorm, over H and W in
// squeeze-excitation blocks): y[o, i] = sum_r x[o, r, i] (times 1 / n for the mean).

#include <cstdint>

namespace kiln::kernels::cpu {

struct ReduceShape {
  int64_t outer = 1;
  int64_t n = 1;
  int64_t inner = 1;
};

// mean: divide by n (an empty reduction gives 0 for the sum and NaN for the mean, as 0 / 0).
void reduce_sum(const ReduceShape& s, bool mean, const float* x, float* y);

}  // namespace kiln::kernels::cpu
