#pragma once
// Deterministic random tensors for `kiln run` when the user supplies no input.
//
// The values depend only on (dtype, dims, seed), on every platform and standard library: the
// generator is std::mt19937_64 (whose output sequence the C++ standard fixes) seeded with `seed`,
// and the mapping from its 64-bit outputs to values is our own, one output per element in
// row-major order:
//   float32/float64/float16/bfloat16: uniform in [-1, 1) on a grid the dtype represents exactly:
//     k = x >> (64 - p), value = k * 2^(1-p) - 1, with p = 24 / 53 / 11 / 8 bits;
//   integer dtypes: uniform in [0, 10): x % 10, drawing again while x >= 2^64 - (2^64 % 10) so
//     that every digit is equally likely;
//   bool: the top bit of x.

#include <cstdint>

#include "base/status.h"
#include "base/tensor.h"

namespace kiln::io {

// InvalidArgument for bad dims (see check_dims), Unsupported for string/undefined dtypes.
Result<Tensor> random_tensor(DType dtype, const Dims& dims, uint64_t seed);

}  // namespace kiln::io
