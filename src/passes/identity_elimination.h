#pragma once
// identity_elimination: removes nodes that pass their input through unchanged at inference:
// Identity, Dropout (when its mask is unused and it is not in training mode) and Cast/CastLike to
// the dtype the input already has.

#include "passes/pass.h"

namespace kiln::passes {

const PassDef& identity_elimination_pass();

}  // namespace kiln::passes
