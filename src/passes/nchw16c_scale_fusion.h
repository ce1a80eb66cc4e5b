#pragma once
// A squeeze-and-excitation's channel scale into the 1x1 convolution that reads it:
// kiln.MulNchw16c(X, S) whose only reader is a pointwise kiln.ConvNchw16c's X becomes that
// convolution's input S (ops/kiln_layout.h). The scaled tensor is then never written: the
// convolution scales each register tile's input pixels as it loads them. EfficientNet's and
// MobileNetV3's projections read their block's scaled tensor this way.
//
// Runs after nchw16c_layout (passes/pipeline.h), when a tactic runs the fused convolution
// (PassContext::runs_blocked; without one, kiln's own kernels' rule: a 1x1 convolution with
// group 1 and no padding, on a host with AVX2 + FMA).

#include "passes/pass.h"

namespace kiln::passes {

const PassDef& nchw16c_scale_fusion_pass();

}  // namespace kiln::passes
