#pragma once
// After fuse_requantize: a float32 Mul whose output only a uint8 QuantizeLinear reads (and INT8
// layers as their residual) and whose second operand scales the first per (image, channel) — a
// squeeze-and-excitation block's X * sigmoid(...) in front of an INT8 1x1 convolution — becomes
// one kiln.ScaleQuantize (ops/kiln_quant.h): the product goes to uint8 in one pass instead of a
// float32 tensor written by the Mul and read back by the QuantizeLinear (13 bytes an element
// moved against 5). Bit for bit the same result: the product is rounded to float32 first.

#include <string>
#include <vector>

#include "ir/graph.h"

namespace kiln::quant {

// Returns how many Mul + QuantizeLinear pairs became one layer; one log line each.
int fuse_scale_quantize(ir::Graph& graph, std::vector<std::string>& log);

}  // namespace kiln::quant
