#pragma once
// Convolution with the builtin kernels (kernels/cpu/conv.h), for Conv and for conv-like layers
// whose first inputs and attributes are Conv's (a fused Conv + bias + residual + activation): the
// why_not() checks and the kernel object take the epilogue wiring as a parameter.

#include <memory>
#include <optional>
#include <string>

#include "kernels/cpu/conv.h"
#include "kernels/cpu/elementwise.h"
#include "tactics/tactic.h"

namespace kiln::tactics::builtin {

enum class ConvAlgo {
  kDirect,     // any 1-D or 2-D convolution
  kPointwise,  // 1x1, stride 1, no padding: a GEMM per image and group
};

// How a layer's epilogue maps onto its inputs: X and W are inputs 0 and 1.
struct ConvEpilogueSpec {
  int bias_input = 2;       // [M]; -1: no bias input
  int residual_input = -1;  // a tensor of Y's shape added after the bias; -1: none
  std::optional<kernels::cpu::UnaryParams> activation;  // applied last
};

// Why `algo` cannot run the layer (Conv's inputs and attributes); "" when it can. Every present
// input and the output must be float32.
std::string conv_why_not(const LayerSpec& spec, ConvAlgo algo);

// The kernel object for a layer conv_why_not() accepted.
Result<std::unique_ptr<LayerKernel>> make_conv_kernel(const LayerSpec& spec, ConvAlgo algo,
                                                      const ConvEpilogueSpec& epilogue);

// Conv2DParams for concrete X and W dims (pads and auto_pad resolved as the shape function does;
// a 1-D convolution has in_h = out_h = k_h = 1). Shared with the x86 tactics (tactics/x86).
Result<kernels::cpu::Conv2DParams> conv2d_params(const ir::Node& node, int since_version,
                                                 const TensorView& x, const TensorView& w);

// The geometry constant weights W ([M, C/group, kH, kW] or [M, C/group, kW]) are packed by: all a
// packed layout depends on (channels, group, kernel); the other fields stay zero.
kernels::cpu::Conv2DParams conv_weight_params(const Tensor& w, int64_t group);

const Tactic& conv_pointwise_tactic();  // "conv.1x1_gemm.f32"
const Tactic& conv_direct_tactic();     // "conv.direct.f32"

}  // namespace kiln::tactics::builtin
