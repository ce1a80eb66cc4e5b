#pragma once
// qconv_nhwc: chains of INT8 convolutions (kiln.QConv between uint8 tensors) run channels-last,
// as kiln.QConvNhwc, with a Transpose where a chain begins and ends.
//
// On NHWC each pixel's channels are contiguous, so a kernel can broadcast the input's 4-channel
// quads straight from the tensor with the output channels in the vector lanes, and packs nothing
// per inference; kiln's NCHW INT8 kernel interleaves four channel planes into panels first. On a
// Zen 5 host (2026-12-07, kernel bench, interleaved) ResNet-50's INT8 convolutions took 1.18x /
// 1.27x (1 / 2 threads) as long on kiln's NCHW kernel as on oneDNN's NHWC one.
//
// A QConv is a candidate when its output is uint8 (a uint8 residual or none) and a tactic runs it
// as QConvNhwc (PassContext::runs_blocked, asked with the would-be node; no callback: no
// conversion). Candidates connected through the tensors one writes and another reads form
// chains. A chain converts when it has at least four convolutions per transpose it needs (its
// outside inputs are transposed to NHWC once each, its outputs read outside back to NCHW):
// ResNet-50's 52 take 3; MobileNetV2's 1x1 layers, between depthwise layers that are not
// candidates, form pairs that would each pay two or three, and stay NCHW.
//
// A uint8 MaxPool (2-D, no Indices) that a tactic runs as kiln.MaxPoolNhwc is a chain member too,
// counted as no convolution: a ResNet's stem, its max pool and its blocks are then one chain with
// one transpose in, of the 3-channel input (2026-12-07, Zen 5: INT8 ResNet-50 0.98x the engine
// whose stem and pool stayed NCHW).
//
// Runs among the layout passes, after INT8 lowering (passes/pipeline.h).

#include "passes/pass.h"

namespace kiln::passes {

const PassDef& qconv_nhwc_pass();

}  // namespace kiln::passes
