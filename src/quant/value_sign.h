#pragma once
// Whether a float tensor can only hold values >= 0, from the graph's structure alone: the output of
// a Relu (or a layer with a fused Relu, a Clip with min >= 0, a Sigmoid...), or of pooling and
// data movement over such a tensor. kiln then encodes it in uint8 from 0 instead of around 128,
// which doubles its resolution.

#include "ir/graph.h"
#include "ir/graph_edit.h"

namespace kiln::quant {

bool is_nonnegative(const ir::Graph& graph, const ir::GraphIndex& index, ir::ValueId v);

}  // namespace kiln::quant
