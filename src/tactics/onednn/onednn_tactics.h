#pragma once
// The oneDNN tactic source: Debian's oneDNN 2.6 (libdnnl, OpenMP runtime) behind kiln's tactic
// interface. Its tactics are named "onednn.<op family>.f32" (one name per op, as the engine stores
// and looks tactics up by name) and report source() "onednn". They keep kiln's layout at their
// boundaries (plain row-major, or nChw16c for kiln.ConvNchw16c); constant weights are reordered
// once into the layout the primitive prefers.

#include <span>

#include "tactics/tactic.h"

namespace kiln::tactics::onednn {

// Every oneDNN tactic (all_tactics() lists them after the builtin ones).
std::span<const Tactic* const> onednn_tactics();

const Tactic& conv_tactic();        // "onednn.conv.f32"        Conv
const Tactic& fused_conv_tactic();  // "onednn.fused_conv.f32"  kiln.FusedConv
// oneDNN's Winograd for 3x3 stride-1 layers, reordering to and from its blocked layout.
const Tactic& conv_winograd_tactic();        // "onednn.conv_winograd.f32"        Conv
const Tactic& fused_conv_winograd_tactic();  // "onednn.fused_conv_winograd.f32"  kiln.FusedConv
// The same per slice of output channels, one slice per thread of kiln's pool (onednn_conv.cc).
const Tactic& conv_winograd_slices_tactic();        // "onednn.conv_winograd_slices.f32"  Conv
const Tactic& fused_conv_winograd_slices_tactic();  // "onednn.fused_conv_winograd_slices.f32"
// kiln.ConvNchw16c on blocked tensors, with no reorders: direct and Winograd.
const Tactic& conv_nchw16c_tactic();           // "onednn.conv_nchw16c.f32"
const Tactic& conv_nchw16c_winograd_tactic();  // "onednn.conv_nchw16c_winograd.f32"
const Tactic& matmul_tactic();                 // "onednn.matmul.f32"      MatMul
const Tactic& gemm_tactic();                   // "onednn.gemm.f32"        Gemm
const Tactic& fused_gemm_tactic();             // "onednn.fused_gemm.f32"  kiln.FusedGemm
// kiln.QConvNhwc: oneDNN's int8 convolution on uint8 NHWC tensors (onednn_qconv.cc).
const Tactic& qconv_nhwc_tactic();      // "onednn.qconv_nhwc.u8s8": oneDNN's first implementation
const Tactic& qconv_nhwc_jit_tactic();  // "onednn.qconv_nhwc_jit.u8s8": its jit_int8 kernels

}  // namespace kiln::tactics::onednn
