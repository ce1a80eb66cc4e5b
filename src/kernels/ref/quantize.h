#pragma once
// Reference linear quantization: QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear.

#include <cstdint>

namespace kiln::kernels::ref {

// Per-tensor (axis_size = 1, one scale/zero point) or per-axis (one per index along the axis). The
// tensor is viewed as [outer, axis_size, inner]; element i uses entry (i / inner) % axis_size.
struct QuantParams {
  int64_t numel = 0;
  int64_t axis_size = 1;
  int64_t inner = 1;
};

// y = saturate(round_half_even(x / scale) + zero), the division in float32 as ONNX's reference
// does. zero may be null (0).
template <typename TY>
void quantize_linear(const QuantParams& p, const float* x, const float* scale, const TY* zero,
                     TY* y);

// y = (x - zero) * scale in float32. zero may be null (0).
template <typename TX>
void dequantize_linear(const QuantParams& p, const TX* x, const float* scale, const TX* zero,
                       float* y);

// DynamicQuantizeLinear to uint8: scale = (max(0, max x) - min(0, min x)) / 255,
// zero = saturate(round(-min / scale)), y = saturate(round(x / scale) + zero). An all-zero input
// (scale 0) gives zero point 0 and y = 0.
void dynamic_quantize_linear(int64_t numel, const float* x, uint8_t* y, float* scale,
                             uint8_t* zero);

}  // namespace kiln::kernels::ref
