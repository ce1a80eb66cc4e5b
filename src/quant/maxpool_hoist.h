#pragma once
// Before fuse_requantize: a MaxPool whose output only a uint8 QuantizeLinear reads (and INT8 layers
// as their residual, as in ResNet-18's first block) runs on uint8.
// The QuantizeLinear moves in front of it (x -> Q -> MaxPool -> the INT8 layers): quantization is
// monotone, so the max of quantized values is the quantized max, bit for bit, and the window's
// padding (ignored by MaxPool) cannot win. The layer writing x can then hand uint8 to the pooling
// (fuse_requantize), as ResNet's stem convolution does to its MaxPool.

#include <string>
#include <vector>

#include "ir/graph.h"

namespace kiln::quant {

// Returns how many MaxPools now run on uint8; one log line each.
int hoist_quantize_over_maxpool(ir::Graph& graph, std::vector<std::string>& log);

}  // namespace kiln::quant
