#pragma once
// After the hoists: one tensor quantized twice with the same encoding (a Concat's part that a
// MaxPool also reads, as in YOLOv8's SPPF, once both were hoisted) keeps its first QuantizeLinear;
// the readers of the others read its output, and the others go. That first one runs before the
// others, so before all of their readers: the order stays topological. It can open another hoist
// (the tensor has one QuantizeLinear again), so the hoists and this run until nothing changes.

#include "ir/graph.h"

namespace kiln::quant {

// Returns how many QuantizeLinear nodes were removed.
int merge_duplicate_quantizes(ir::Graph& graph);

}  // namespace kiln::quant
