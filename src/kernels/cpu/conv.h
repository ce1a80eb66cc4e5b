#pragma once
// 2-D convolution, NCHW, float32, any group (depthwise included), stride, dilation and padding,
// with a fused epilogue. 1-D convolution is the case in_h = k_h = out_h = 1.
//
//   y[n, m, oh, ow] = act(bias[m] + residual[n, m, oh, ow]
//                         + sum_{c, kh, kw} w[m, c, kh, kw] * x[n, g*Cg + c, ih, iw])
//   ih = oh * stride_h - pad_top + kh * dil_h, iw = ow * stride_w - pad_left + kw * dil_w
//
// (g = m / (out_c / group), Cg = in_c / group; positions outside the input read as zero). Two
// kernels share these parameters:
//   direct: copies each image into a zero-padded scratch buffer, then accumulates a tile of
//           4 output channels x 8 output columns in registers over (kh, kw, c), the vector loop
//           running over contiguous output columns. Weights are packed once
//           (conv2d_direct_pack_weights) in the order that loop reads them.
//   1x1 GEMM: a 1x1, stride-1, unpadded convolution is per image and group the product
//           W[Mg x Cg] * X[Cg x HW]; weights are packed as the GEMM's A operand.

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/epilogue.h"

namespace kiln::kernels::cpu {

struct Conv2DParams {
  int64_t batch = 1;
  int64_t in_c = 1;
  int64_t in_h = 1;
  int64_t in_w = 1;
  int64_t out_c = 1;
  int64_t out_h = 1;
  int64_t out_w = 1;
  int64_t group = 1;
  int64_t k_h = 1;
  int64_t k_w = 1;
  int64_t stride_h = 1;
  int64_t stride_w = 1;
  int64_t dil_h = 1;
  int64_t dil_w = 1;
  int64_t pad_top = 0;  // >= 0; the bottom and right padding follow from the output dims
  int64_t pad_left = 0;
};

struct ConvEpilogue {
  const float* bias = nullptr;      // [out_c], may be null
  const float* residual = nullptr;  // same shape as y, may be null, may be y itself (in place)
  ActivateFn activate = nullptr;    // applied last, in place; null: identity
  const void* activate_ctx = nullptr;
};

// --- direct
// ---------------------------------------------------------------------------------------

size_t conv2d_direct_packed_weights_floats(const Conv2DParams& p);
// w: [out_c, in_c / group, k_h, k_w] (OIHW).
void conv2d_direct_pack_weights(const Conv2DParams& p, const float* w, float* packed);
size_t conv2d_direct_scratch_floats(const Conv2DParams& p);
void conv2d_direct(const Conv2DParams& p, const float* x, const float* packed_w,
                   const ConvEpilogue& ep, float* y, float* scratch);

// --- 1x1 as GEMM
// ----------------------------------------------------------------------------------

// True when p is a 1x1 convolution with stride 1 and no padding (dilation does not matter).
bool conv2d_is_pointwise(const Conv2DParams& p);
size_t conv2d_pointwise_packed_weights_floats(const Conv2DParams& p);
void conv2d_pointwise_pack_weights(const Conv2DParams& p, const float* w, float* packed);
size_t conv2d_pointwise_scratch_floats(const Conv2DParams& p);
void conv2d_pointwise(const Conv2DParams& p, const float* x, const float* packed_w,
                      const ConvEpilogue& ep, float* y, float* scratch);

}  // namespace kiln::kernels::cpu
