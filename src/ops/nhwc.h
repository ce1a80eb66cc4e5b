#pragma once
// The references of kiln's channels-last ops (kiln.QConvNhwc, kiln.MaxPoolNhwc: what
// passes/qconv_nhwc.h makes) run their NCHW forms between transposes; these are the permutations
// and the permuted shapes and tensors they share.

#include <cstdint>
#include <span>

#include "base/tensor.h"
#include "ir/tensor_desc.h"

namespace kiln::ops {

inline constexpr int64_t kNhwcToNchw[] = {0, 3, 1, 2};
inline constexpr int64_t kNchwToNhwc[] = {0, 2, 3, 1};

// out[i] = in[perm[i]]; a desc without a rank is returned as it is.
Dims permuted(const Dims& d, std::span<const int64_t> perm);
ir::TensorDesc permuted(const ir::TensorDesc& d, std::span<const int64_t> perm);
// The tensor transposed by perm (a copy).
Tensor permuted(const Tensor& t, std::span<const int64_t> perm);

}  // namespace kiln::ops
