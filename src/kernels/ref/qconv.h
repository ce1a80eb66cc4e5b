#pragma once
// Reference kernels of kiln's INT8 layers, kiln.QConv and kiln.QGemm (ops/kiln_quant.h): uint8
// activations with a per-tensor zero point times int8 symmetric per-output-channel weights,
// accumulated exactly in int32, then a float epilogue applied per output:
//
//   v = float(acc) * (in_scale * w_scale[c]) + bias[c] + z     (c: output channel / column)
//   v = act(v)
//   y = v (float output), or clamp(round_half_even(v / y_scale) + y_zero, 0, 255) (uint8 output)
//
// z is the residual: a float tensor of Y's shape, or a uint8 one dequantized as
// (Z - z_zero) * z_scale; 0 without one. The float operations happen in that order, each rounded
// to float32, so an optimized kernel can reproduce them (only the activation's formula and the
// division by y_scale, which kernels may do as a multiplication, may differ in the last bit).
// Rounding to uint8 is QuantizeLinear's: the quotient is rounded half to even, the (integer) zero
// point added, the result saturated; a NaN quotient gives the zero point.

#include <cstdint>

#include "kernels/ref/activation.h"
#include "kernels/ref/conv.h"

namespace kiln::kernels::ref {

struct QuantEpilogue {
  float in_scale = 1.0f;           // x_scale / a_scale
  int32_t in_zero = 0;             // x_zero_point / a_zero_point, 0..255
  const float* w_scale = nullptr;  // per output channel (QConv) or column (QGemm)
  const float* bias = nullptr;     // same indexing, may be null
  ActivationParams act;
  // The residual, indexed like Y; at most one of the two is set.
  const float* z_f32 = nullptr;
  const uint8_t* z_u8 = nullptr;
  float z_scale = 1.0f;
  int32_t z_zero = 0;
  bool out_u8 = false;  // else float32
  float y_scale = 1.0f;
  int32_t y_zero = 0;
};

// clamp(round_half_even(v / y_scale) + y_zero, 0, 255); NaN gives y_zero.
uint8_t requantize_u8(float v, float y_scale, int32_t y_zero);

// Outputs [first, first + count) of Y (float* or uint8_t* as e.out_u8 says) from their int32
// accumulators acc[0, count); output i belongs to channel `channel + i * channel_step` (a conv
// plane: step 0; a GEMM row: step 1). The residual is read at the same flat indices as Y.
void quant_epilogue(const QuantEpilogue& e, const int32_t* acc, int64_t count, int64_t first,
                    int64_t channel, int64_t channel_step, void* y);

// kiln.QConv: conv_integer<uint8_t, int8_t> (x_zero = e.in_zero, symmetric weights) over the
// geometry p, then the epilogue with c = the output channel.
void qconv(const ConvParams& p, const QuantEpilogue& e, const uint8_t* x, const int8_t* w, void* y);

// kiln.QGemm: y[i, j] for a [m, k] (row-major) and b [k, n]: acc = sum_p (a[i, p] - in_zero) *
// b[p, j], then the epilogue with c = j.
void qgemm(int64_t m, int64_t k, int64_t n, const QuantEpilogue& e, const uint8_t* a,
           const int8_t* b, void* y);

}  // namespace kiln::kernels::ref
