#pragma once
// kiln's INT8 operators (domain "kiln", version 1), created by the quantization passes from
// calibration ranges or from a QDQ model's QuantizeLinear / DequantizeLinear pairs:
//
//   kiln.QConv(X, W, W_scale, B?, Z?) -> Y
//   kiln.QGemm(A, B, B_scale, C?, Z?) -> Y
//   kiln.ScaleQuantize(X, S) -> Y
//
// Quantized activations are uint8 with a per-tensor zero point; weights are int8, symmetric (zero
// point 0), one scale per output channel (QConv) or column (QGemm). Per output element:
//
//   acc = sum over the window (QConv) or K (QGemm) of (X - x_zero_point) * W, exact in int32
//   v   = act(x_scale * W_scale[m] * acc + B[m] + z)       (m: the output channel or column)
//   Y   = v (output_type 1), or clamp(round_half_even(v / y_scale) + y_zero_point, 0, 255)
//         (output_type 2)
//
// X's padded positions count as x_zero_point (real zero). z is the residual Z (exactly Y's shape):
// as it is when float32, (Z - z_zero_point) * z_scale when uint8, 0 without Z.
//
// QConv: X uint8 [N, C, D1..Dk] (k = 1, 2 or 3), W int8 constant [M, C/group, K1..Kk], W_scale
// float32 constant [M], B float32 constant [M]. Attributes: Conv's (auto_pad, dilations, group,
// kernel_shape, pads, strides), activation / activation_params (as kiln.FusedConv, kiln_fused.h),
// x_scale, x_zero_point, output_type, y_scale, y_zero_point, z_scale, z_zero_point.
// QGemm: A uint8 [..., K] (rank >= 2), B int8 constant [K, N], B_scale float32 constant [N], C
// float32 constant [N]; Y [..., N]. Attributes: activation, activation_params, a_scale,
// a_zero_point, output_type, y_scale, y_zero_point, z_scale, z_zero_point.
//
// ScaleQuantize: QuantizeLinear(Mul(X, S)) to uint8 in one pass, bit for bit: X float32 [N, C,
// D...], S float32 [1 or N, C, 1, ...] (a squeeze-and-excitation's channel scales), attributes
// y_scale and y_zero_point (required); Y uint8, X's shape, = saturate(round_half_even(float(X *
// S) / y_scale) + y_zero_point). quant/scale_quantize_fusion.h makes it.
//
// Attribute rules: x_scale / a_scale is required; the zero points are 0..255 and default to 0;
// output_type is 1 (float32, the default) or 2 (uint8); y_scale and y_zero_point are required
// when output_type is 2, z_scale and z_zero_point when Z is uint8. Scales are finite and >= 0
// (y_scale > 0: it divides); the per-channel inputs (W_scale, B_scale, B, C) finite.
// The depth (C/group * K1 * ... * Kk, or K) is at most kMaxQuantDepth, so that the int32
// accumulator is exact.

#include <cstdint>
#include <string_view>

#include "base/status.h"
#include "kernels/ref/activation.h"
#include "ops/op_def.h"

namespace kiln::ops {

// ONNX TensorProto codes of output_type.
inline constexpr int64_t kQuantOutputFloat = 1;
inline constexpr int64_t kQuantOutputUint8 = 2;
// 255 * 128 * depth must fit in int32: the accumulator of (X - zero) * W never wraps.
inline constexpr int64_t kMaxQuantDepth = 65793;

// The node's quantization attributes, validated (see above). `in` is "x" (QConv) or "a" (QGemm);
// z_uint8 says whether the node has a uint8 residual (z_scale / z_zero_point are then required).
struct QuantAttrs {
  float in_scale = 1.0f;
  int32_t in_zero = 0;
  bool out_u8 = false;
  float y_scale = 1.0f;
  int32_t y_zero = 0;
  float z_scale = 1.0f;
  int32_t z_zero = 0;
};
Result<QuantAttrs> read_quant_attrs(const NodeContext& ctx, std::string_view in, bool z_uint8);

}  // namespace kiln::ops
