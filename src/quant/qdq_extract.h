#pragma once
// Explicit quantization: a QDQ model (as PyTorch, ONNX Runtime's quantizer or NVIDIA's ModelOpt
// write them) says where to quantize and with which scales. Before the graph passes, kiln takes
// the Q/DQ nodes out and keeps what they said:
//   - QuantizeLinear -> DequantizeLinear on an activation x (per tensor): the pair goes, its
//     readers read x, and x's scale and zero point are recorded (int8 zero point z becomes uint8
//     z + 128: the same real values);
//   - DequantizeLinear of a constant (int8 weights, int32 biases), or Q -> DQ of a float constant
//     (fake-quantized weights): folded into a float constant, and int8 weights' scales recorded.
// The float graph then goes through BN folding and the fusions unchanged, and quantize_layers
// lowers exactly the layers whose inputs had Q/DQ, with the model's own scales.

#include <string>
#include <vector>

#include "base/status.h"
#include "ir/graph.h"
#include "quant/tensor_ranges.h"

namespace kiln::quant {

// True when the graph has a QuantizeLinear or DequantizeLinear node.
bool has_qdq(const ir::Graph& graph);

struct QdqSummary {
  int activation_pairs = 0;  // Q -> DQ pairs removed
  int constants = 0;         // DequantizeLinear (or Q -> DQ) of constants folded
  int left = 0;              // Q / DQ nodes that stay (they run in float, as the model says)
};

// Rewrites `graph` (shapes inferred) and fills `table`; log lines name what was kept as is.
Result<QdqSummary> extract_qdq(ir::Graph& graph, RangeTable& table, std::vector<std::string>& log);

}  // namespace kiln::quant
