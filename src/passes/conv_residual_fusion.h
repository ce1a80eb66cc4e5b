#pragma once
// Add(conv_out, other) -> kiln.FusedConv(X, W, B, Z = other), when conv_out comes from a Conv (or a
// kiln.FusedConv with neither activation nor residual) and is read only by the Add, and `other` has
// exactly conv_out's shape and dtype (no broadcasting). The fused node takes the Add's place, where
// `other` is available. When both operands qualify, the later-produced conv is fused.
//
// Runs before conv_activation_fusion, so that ResNet's Conv -> (folded BN) -> Add -> Relu becomes
// one FusedConv with a residual and a Relu.

#include "passes/pass.h"

namespace kiln::passes {

const PassDef& conv_residual_fusion_pass();

}  // namespace kiln::passes
