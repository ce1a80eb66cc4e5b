#pragma once
// Weights for the INT8 layers: int8, symmetric (zero point 0), one scale per output channel, as
// TensorRT and ONNX Runtime quantize them: scale[c] = max |w| over the channel / 127, q = clamp(
// round_half_even(w / scale[c]), -127, 127). -128 is never used, so that -q is always representable
// and the weights' range is symmetric.

#include "base/status.h"
#include "base/tensor.h"

namespace kiln::quant {

struct ChannelQuantized {
  Tensor q;       // int8, the weight's dims
  Tensor scales;  // float32 [channels]
};

// `w` (float32 or float16) quantized per index of `axis`. A channel of zeros gets scale 1 (its
// weights quantize to 0 whatever the scale) so that no scale is 0. qmax < 127 narrows the range
// to [-qmax, qmax] (63: 7-bit weights).
Result<ChannelQuantized> quantize_per_channel(const Tensor& w, int axis, int qmax = 127);

// `w` quantized with given scales (one per index of `axis`, or one for all): q = clamp(round_half_
// even(w / s), -128, 127). A QDQ model's dequantized weights come back to their int8 values.
Result<ChannelQuantized> quantize_with_scales(const Tensor& w, const Tensor& scales, int axis);

// A 2-D tensor's transpose (Gemm's transB weights become [K, N]).
Result<Tensor> transpose_2d(const Tensor& t);

}  // namespace kiln::quant
