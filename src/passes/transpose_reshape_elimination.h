#pragma once
// transpose_reshape_elimination: removes data movement that changes nothing and merges chains:
//   - Transpose with the identity perm: removed.
//   - Transpose(p1) -> Transpose(p2): one Transpose with the composed perm, or none when they
//   cancel.
//   - Reshape/Flatten/Squeeze/Unsqueeze -> Reshape(constant shape): the second reshapes the first's
//     input directly, unless its shape has a 0 (copy the dim) that would read the intermediate.
//   - Reshape/Flatten/Squeeze/Unsqueeze whose output shape is its input's: removed.
// A merge needs the intermediate to have no other reader; a graph output keeps its name.

#include "passes/pass.h"

namespace kiln::passes {

const PassDef& transpose_reshape_elimination_pass();

}  // namespace kiln::passes
