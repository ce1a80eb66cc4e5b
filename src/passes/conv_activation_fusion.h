#pragma once
// Conv, or a kiln.FusedConv without an activation, followed by an activation in any spelling
// passes/activation_match.h knows -> kiln.FusedConv with that activation as its epilogue.

#include "passes/pass.h"

namespace kiln::passes {

const PassDef& conv_activation_fusion_pass();

}  // namespace kiln::passes
