#pragma once
// dead_node_elimination: removes nodes whose outputs nobody reads (transitively; graph outputs are
// read by the user) and drops initializers no node reads, so the engine does not store them. Values
// left without a reference are compacted away. Runs last, after the passes that orphan nodes and
// constants (folding, fusions).

#include "passes/pass.h"

namespace kiln::passes {

const PassDef& dead_node_elimination_pass();

}  // namespace kiln::passes
