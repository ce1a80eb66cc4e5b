#pragma once
// Reference convolution and transposed convolution over any number of spatial dimensions.
//
// Layout (NCHW generalised to N spatial dims, row-major):
//   X  [batch, in_channels, D1, ..., Dk]
//   Conv:          W [out_channels, in_channels / group, K1, ..., Kk]   (OIHW)
//   ConvTranspose: W [in_channels, out_channels / group, K1, ..., Kk]   (IOHW)
//   B  [out_channels] (optional, nullptr when absent)
//   Y  [batch, out_channels, O1, ..., Ok]
// Channels are split into `group` contiguous groups; group g of the output reads only group g of
// the input. Depthwise convolution is group == in_channels.
//
// Spatial arithmetic for dim i (positions outside the input read as zero; for ConvTranspose a
// negative pad_begin shifts the output window past the full result, see ConvTranspose
// output_shape):
//   Conv:          input coordinate  = o * stride - pad_begin + k * dilation
//   ConvTranspose: output coordinate = x * stride - pad_begin + k * dilation   (the scatter form)
// The output dims are an input of the kernel: the shape function derives them from the attributes.
//
// Accumulation is in double. T is float or double; float16 callers convert to float first.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln::kernels::ref {

struct ConvParams {
  int64_t batch = 1;
  int64_t in_channels = 1;
  int64_t out_channels = 1;
  int64_t group = 1;
  std::vector<int64_t> in_dims;     // D1..Dk
  std::vector<int64_t> out_dims;    // O1..Ok
  std::vector<int64_t> kernel;      // K1..Kk
  std::vector<int64_t> strides;     // >= 1
  std::vector<int64_t> dilations;   // >= 1
  std::vector<int64_t> pads_begin;  // >= 0 for Conv; any value for ConvTranspose
};

template <typename T>
void conv(const ConvParams& p, const T* x, const T* w, const T* bias, T* y);

template <typename T>
void conv_transpose(const ConvParams& p, const T* x, const T* w, const T* bias, T* y);

// --- integer convolution (ConvInteger, QLinearConv) ----------------------------------------------
// The oracle of the int8 kernels (u8 x s8 -> s32 and friends). With the layout and spatial
// arithmetic of `conv` above:
//   acc[n, m, o] = sum over c, k of (x[n, c, o*s - p + k*d] - x_zero) * (w[m, c, k] - w_zero[m])
// in exact integer arithmetic, the sum wrapping to int32 as a 32-bit accumulator does (8-bit
// operands would need about 2^15 terms to overflow). Padded positions contribute 0: padding is
// x_zero in the quantized domain, i.e. real zero.
struct ConvZeroPoints {
  int32_t x = 0;           // per-tensor
  std::vector<int32_t> w;  // empty (all 0), 1 (per-tensor) or out_channels (per-channel)
  int32_t w_at(int64_t m) const {
    return w.empty() ? 0 : w[w.size() == 1 ? 0 : static_cast<size_t>(m)];
  }
};

// y = acc (ConvInteger). TX and TW are uint8_t or int8_t.
template <typename TX, typename TW>
void conv_integer(const ConvParams& p, const ConvZeroPoints& zero, const TX* x, const TW* w,
                  int32_t* y);

// QLinearConv's requantization of acc + bias[m] (int32, bias may be null) to TY:
//   y = saturate(round_half_even((acc + bias[m]) * (x_scale * w_scale[m] / y_scale)) + y_zero)
// the multiplier and the product computed in float32 as ONNX's reference (and QLinearMatMul's
// kernel) do, saturation as in QuantizeLinear.
struct ConvQuantScales {
  float x = 1.0f;
  std::vector<float> w;  // 1 (per-tensor) or out_channels (per-channel)
  float y = 1.0f;
};

template <typename TX, typename TW, typename TY>
void qlinear_conv(const ConvParams& p, const ConvZeroPoints& zero, const ConvQuantScales& scales,
                  const TX* x, const TW* w, const int32_t* bias, TY y_zero, TY* y);

}  // namespace kiln::kernels::ref
