#pragma once
// Removing a node whose output equals one of its inputs (Identity, a Cast to the same dtype, a
// Reshape to the same shape, Transposes that cancel): its readers read the input instead.

#include "ir/graph.h"

namespace kiln::passes {

// Whether `out` can be replaced by `in`. Always when `out` is not a graph output. When it is, the
// output must keep its name, so `in`'s producer takes over producing it: `in` must then be produced
// by a node (not a graph input or an initializer) and not be a graph output itself (two graph
// outputs cannot become one value).
bool can_bypass(const ir::Graph& graph, ir::ValueId in, ir::ValueId out);

// Readers of `out` read `in` instead; for a graph output, `in`'s producer produces `out`. Requires
// can_bypass. The node that produced `out` is left for the caller to remove.
void bypass(ir::Graph& graph, ir::ValueId in, ir::ValueId out);

}  // namespace kiln::passes
