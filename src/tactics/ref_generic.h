#pragma once
// "ref.generic": runs any op kiln knows with its reference kernel (ops/OpDef::run), writing
// straight into the engine's buffers. The fallback every layer has; slow, allocating, and exactly
// as correct as the oracle.

#include "tactics/tactic.h"

namespace kiln::tactics {

const Tactic& ref_generic_tactic();

}  // namespace kiln::tactics
