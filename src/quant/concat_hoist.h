#pragma once
// Before fuse_requantize: a Concat whose output only a uint8 QuantizeLinear reads (and INT8 layers
// as their residual) concatenates uint8 tensors. The QuantizeLinear, per tensor, is applied to each
// input instead with the same scale and zero point (x_i -> Q -> Concat -> the INT8 layers):
// quantizing element by element commutes with concatenating, bit for bit, and the parts share the
// output's encoding as TensorRT's concatenation does. The layers writing the parts can then hand
// uint8 to the Concat (fuse_requantize): DeepLabV3's ASPP branches, YOLOv8's C2f blocks and SPPF.

#include <string>
#include <vector>

#include "ir/graph.h"

namespace kiln::quant {

// Returns how many Concats now run on uint8; one log line each.
int hoist_quantize_over_concat(ir::Graph& graph, std::vector<std::string>& log);

}  // namespace kiln::quant
