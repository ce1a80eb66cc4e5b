#pragma once
// Softmax over the middle dim of an [outer, n, inner] view (opset 13: the dims before / after the
// axis; before opset 13 inner = 1 and n is the product of the dims from the axis on). Subtracts
// the maximum first, as the reference does.

#include <cstddef>
#include <cstdint>

namespace kiln::kernels::cpu {

struct SoftmaxShape {
  int64_t outer = 1;
  int64_t n = 1;
  int64_t inner = 1;
};

// Scratch for inner > 1 (a running maximum and sum per inner position); 0 when inner == 1.
size_t softmax_scratch_floats(const SoftmaxShape& s);
void softmax(const SoftmaxShape& s, const float* x, float* y, float* scratch);

}  // namespace kiln::kernels::cpu
