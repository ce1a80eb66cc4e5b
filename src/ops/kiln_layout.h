#pragma once
// kiln's blocked-layout operators (domain "kiln", version 1), placed by the nchw16c_layout pass
// (passes/nchw16c_layout.h) around convolutions that run on the nChw16c layout
// (kernels/ref/layout.h). A blocked tensor's shape is [N, Cp, H, W] with Cp the channel count
// rounded up to 16; its bytes are in nChw16c order, not NCHW.
//
//   kiln.ToNchw16c(X) -> Y             X float32 NCHW [N, C, H, W]; Y blocked [N, Cp, H, W]
//   kiln.FromNchw16c(X) -> Y           X blocked; Y NCHW [N, channels, H, W] (attribute channels)
//   kiln.ConvNchw16c(X, W, B?, Z?, S?) -> Y
//     kiln.FusedConv on blocked X, Z and Y: X [N, Cp, H, W] with C = W's dim 1 x group, Y and Z
//     [N, Mp, Ho, Wo] for W's M output channels. W and B are as in FusedConv. With attribute
//     x_layout "nchw" (a first layer of few channels) X is NCHW [N, C, H, W] and only Y blocked.
//     S, blocked [1 or N, Cp, 1, 1], scales X's channels first: the convolution of MulNchw16c(X,
//     S) (a squeeze-and-excitation's scale, fused by passes/nchw16c_scale_fusion.h).
//   kiln.ExpandDwNchw16c(X, We, Be?, Wd, Bd?, Z?) -> Y
//     An inverted residual block's expansion and depthwise layers as one (fused by
//     passes/expand_dw_fusion.h): Y = ConvNchw16c(E, Wd, Bd, Z) with E = ConvNchw16c(X, We, Be),
//     E a 1x1 convolution (group 1, no padding, stride 1) with the activation in attributes
//     expand_activation / expand_activation_params, and the depthwise one (group = E's channels)
//     with the window attributes and activation of ConvNchw16c. E is never stored whole.
//   kiln.GlobalAveragePoolNchw16c(X) -> Y   X blocked [N, Cp, H, W]; Y blocked [N, Cp, 1, 1], every
//     lane's mean over the pixels (padding lanes too)
//   kiln.MulNchw16c(X, S) -> Y           X blocked [N, Cp, H, W], S blocked [N or 1, Cp, 1, 1]: Y =
//     X times S's value of the same image and lane (a squeeze-and-excitation's channel scale)
//   kiln.MaxPoolNchw16c(X) -> Y          ONNX MaxPool (opset 12 attributes, 2-D window, no Indices)
//     on blocked X [N, Cp, H, W], every lane pooled alone (padding lanes too)
//   kiln.ResizeNchw16c(X, roi?, scales?, sizes?) -> Y   ONNX Resize at version `resize_version`
//     (an attribute; the others are Resize's) on blocked X [N, Cp, H, W], every lane resized alone
//     (padding lanes too); its scales or sizes keep N and C
//   kiln.MaxPoolNhwc(X) -> Y            ONNX MaxPool (opset 12 attributes, 2-D window, no Indices)
//     on channels-last uint8 X [N, H, W, C], Y [N, OH, OW, C]: what passes/qconv_nhwc.h makes of
//     a MaxPool inside a chain of channels-last INT8 convolutions (a ResNet's stem)
// The four Nchw16c ones after ExpandDwNchw16c carry the real channel count as attribute `channels`.
// A blocked [N, Cp, 1, 1] tensor has the bytes of an NCHW one with Cp channels.

#include <cstddef>
#include <string_view>

#include "ops/op_def.h"

namespace kiln::ops {

inline constexpr std::string_view kToNchw16c = "ToNchw16c";
inline constexpr std::string_view kFromNchw16c = "FromNchw16c";
inline constexpr std::string_view kConvNchw16c = "ConvNchw16c";
inline constexpr std::string_view kExpandDwNchw16c = "ExpandDwNchw16c";
inline constexpr std::string_view kGlobalAveragePoolNchw16c = "GlobalAveragePoolNchw16c";
inline constexpr std::string_view kMulNchw16c = "MulNchw16c";
inline constexpr std::string_view kMaxPoolNchw16c = "MaxPoolNchw16c";
inline constexpr std::string_view kResizeNchw16c = "ResizeNchw16c";
inline constexpr std::string_view kMaxPoolNhwc = "MaxPoolNhwc";
// ConvNchw16c's input S, X's channel scale.
inline constexpr size_t kConvNchw16cScaleInput = 4;

// The ONNX Resize version whose inputs and attributes a kiln.ResizeNchw16c keeps (its attribute
// resize_version; the layout pass always sets it).
int resize_nchw16c_version(const ir::Attributes& attrs);

void register_kiln_layout_ops(OpRegistry& r);

}  // namespace kiln::ops
