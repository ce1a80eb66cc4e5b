#pragma once
// An inverted residual block's 1x1 expansion into the depthwise convolution that reads it:
// a pointwise kiln.ConvNchw16c (blocked X, group 1, stride 1, no padding, channel scale or
// residual) whose only reader is a depthwise kiln.ConvNchw16c's X becomes, with it, one
// kiln.ExpandDwNchw16c (ops/kiln_layout.h), whose kernel runs a band of the depthwise layer's
// output rows at a time from the expansion rows it reads: the expanded tensor is never written.
//
// Only where that tensor is larger than a core's L2 (host_cache_sizes()): between two layers it
// then goes out to L3 or memory and comes back, and in a network whose weights and tensors pass
// through the caches every inference the expansion's writes first read their lines from memory.
// On a Zen 5 host (2026-12-06, 1 thread, caches evicted before each run) MobileNetV2's 16 -> 96
// expansion at 112x112 with its stride-2 depthwise ran in 0.72x the two layers' time; smaller
// expansions, which stay in L2, gain nothing and pay for the rows a band computes twice.
//
// Runs after nchw16c_scale_fusion (passes/pipeline.h), when a tactic runs the fused layer
// (PassContext::runs_blocked; without one, on a host with AVX2 + FMA).

#include "passes/pass.h"

namespace kiln::passes {

const PassDef& expand_dw_fusion_pass();

}  // namespace kiln::passes
