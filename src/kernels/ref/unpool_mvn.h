#pragma once
// Reference MaxUnpool and MeanVarianceNormalization.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln::kernels::ref {

// MaxUnpool: scatters x (x_numel elements of elem_size bytes) to the flat positions `indices` of a
// tensor of `unpooled` dims (the input of the MaxPool that produced them), that tensor sitting at
// the origin of y, of `out` dims (each >= unpooled's; equal without an explicit output_shape). y
// must be zero-filled by the caller; every index must lie in [0, numel(unpooled)) (the caller
// checks). When indices repeat, the last write wins.
void max_unpool(const std::vector<int64_t>& unpooled, const std::vector<int64_t>& out,
                int64_t x_numel, size_t elem_size, const void* x, const int64_t* indices, void* y);

// MeanVarianceNormalization over the dims with reduce[d] true of a row-major tensor of `dims`:
//   y = (x - mean) / (sqrt(mean(x^2) - mean^2) + 1e-9)
// the epsilon added to the standard deviation as in ONNX's function body. Statistics in double (the
// variance as the mean squared deviation, which equals mean(x^2) - mean^2 without cancellation).
// T is float or double.
template <typename T>
void mean_variance_normalization(const std::vector<int64_t>& dims, const std::vector<bool>& reduce,
                                 const T* x, T* y);

}  // namespace kiln::kernels::ref
