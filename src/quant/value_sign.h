#pragma once
// Whether a float tensor can only hold values >= 0, from the graph's structure alone: the output of
// a Relu (or a layer with a fused Relu, a Clip with min >= 0, a Sigmoid...), or of pooling and
// data movement over such a tensor. kiln then encodes it in uint8 from 0 instead of around 128,
// which doubles its resolution. Also the uint8 encoding of a tensor and the uint8 value that holds
// it, which the INT8 rewrites share.

#include "ir/graph.h"
#include "ir/graph_edit.h"
#include "quant/tensor_ranges.h"

namespace kiln::quant {

// Ops whose output holds exactly the values of their first input, rearranged (data movement and
// kiln.Patches): the output's sign and range are the input's.
bool rearranges_values(const ir::Node& n);

bool is_nonnegative(const ir::Graph& graph, const ir::GraphIndex& index, ir::ValueId v);

// The same, or the calibration never saw a value below 0 in it.
bool range_nonnegative(const ir::Graph& graph, const ir::GraphIndex& index, ir::ValueId v,
                       const TensorRange& r);

// The uint8 encoding of `v` with range `r`: the model's own (a QDQ model's) or from its amax.
Uint8Encoding value_encoding(const ir::Graph& graph, const ir::GraphIndex& index, ir::ValueId v,
                             const TensorRange& r);

// A new uint8 value of v's shape, named after v ("<name>_u8"): the tensor a QuantizeLinear of v
// writes, or an INT8 layer writing v as uint8.
ir::ValueId add_uint8_value(ir::Graph& g, ir::ValueId v);

}  // namespace kiln::quant
