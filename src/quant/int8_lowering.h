#pragma once
// The pieces of quantize_layers: turning one float layer into its INT8 op, and the uint8 inputs
// those ops read. Internal to src/quant.

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "ir/graph.h"
#include "ir/graph_edit.h"
#include "quant/tensor_ranges.h"

namespace kiln::quant {

// The uint8 version of float tensors, made once per tensor by a QuantizeLinear inserted before the
// first node that needs it.
class InputQuantizer {
 public:
  InputQuantizer(ir::Graph& graph, const ir::GraphIndex& index, const RangeTable& ranges);

  // Whether `v` can be quantized (a float32 tensor with a range); the error says why not.
  Status check(ir::ValueId v) const;
  // v's uint8 value and its encoding; the QuantizeLinear goes before node `reader` (a graph index
  // from before any insertion). check(v) must have passed.
  std::pair<ir::ValueId, Uint8Encoding> quantized(ir::ValueId v, int reader);

  const RangeTable& ranges() const { return ranges_; }

  // The QuantizeLinear nodes to insert, by the index of the node they go before.
  const std::map<int, std::vector<ir::Node>>& inserted() const { return inserted_; }

 private:
  // v's range: the calibration's or, for a tensor it has none for that a view or kiln.Patches made
  // (often one a graph pass created, which calibration never saw), the range of the tensor it
  // rearranges.
  const TensorRange* range(ir::ValueId v) const;

  ir::Graph& graph_;
  const ir::GraphIndex& index_;
  const RangeTable& ranges_;
  std::map<ir::ValueId, std::pair<ir::ValueId, Uint8Encoding>> done_;
  std::map<int, std::vector<ir::Node>> inserted_;
  ir::NodeNames node_names_;
};

// Conv / kiln.FusedConv -> kiln.QConv; Gemm / kiln.FusedGemm / MatMul with constant weights ->
// kiln.QGemm. Nullopt-like error (unsupported) with the reason when the layer must stay float.
// Weights the model gives no scales for are quantized per channel onto [-weight_qmax, weight_qmax].
bool is_int8_candidate(const ir::Node& node);
Result<ir::Node> lower_to_int8(ir::Graph& graph, int node_index, InputQuantizer& inputs,
                               int weight_qmax);

}  // namespace kiln::quant
