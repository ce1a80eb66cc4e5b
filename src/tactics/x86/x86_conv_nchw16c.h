#pragma once
// What the tactics of kiln.ConvNchw16c (x86_conv_nchw16c.cc, x86_conv_winograd.cc) share: the
// geometry of a blocked convolution and the checks of its tensors.

#include <span>

#include "base/status.h"
#include "base/tensor_view.h"
#include "kernels/cpu/conv.h"
#include "tactics/tactic.h"

namespace kiln::tactics::x86 {

// X is NCHW (x_layout "nchw": a first layer of few channels) and only Y blocked.
bool nchw16c_plain_x(const ir::Node& node);
// The convolution's geometry with X's real channel count (W's dim 1 x group) in place of the
// blocked tensor's padded one.
Result<kernels::cpu::Conv2DParams> nchw16c_params(const ir::Node& node, int since_version,
                                                  const TensorView& x, const TensorView& w);
// The geometry the weights alone give (build time: no input shape).
kernels::cpu::Conv2DParams nchw16c_weight_params(const ir::Node& node, const Tensor& w);
// Y blocked with p's shape; the bias (input 2) one value per output channel; the residual (input
// 3) Y's shape.
Status check_nchw16c_io(const ir::Node& node, const kernels::cpu::Conv2DParams& p,
                        std::span<const TensorView> in, std::span<const TensorView> out);

}  // namespace kiln::tactics::x86
