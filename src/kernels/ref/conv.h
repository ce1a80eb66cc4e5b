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

}  // namespace kiln::kernels::ref
