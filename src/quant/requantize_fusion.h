#pragma once
// After quantize_layers: INT8 layers hand uint8 tensors to each other directly. An INT8 layer whose
// float output is read only by the QuantizeLinear of that output and as the residual (Z) of other
// INT8 layers writes the uint8 tensor itself (output_type 2, the QuantizeLinear's scale and zero
// point), the QuantizeLinear goes, and the residual readers take the uint8 tensor with the same
// encoding (z_scale, z_zero_point). A float output anyone else reads (a pooling, an Add, a graph
// output) stays float.

#include <string>
#include <vector>

#include "ir/graph.h"

namespace kiln::quant {

// Returns the number of layers that now write uint8; one log line per fusion.
int fuse_requantize(ir::Graph& graph, std::vector<std::string>& log);

}  // namespace kiln::quant
