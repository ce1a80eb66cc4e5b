#include "quant/quantize_merge.h"

#include <map>
#include <tuple>
#include <utility>

#include "ir/graph_edit.h"
#include "quant/requantize_fusion.h"

namespace kiln::quant {

int merge_duplicate_quantizes(ir::Graph& graph) {
  // (input, scale, zero point) -> the first QuantizeLinear's output.
  std::map<std::tuple<ir::ValueId, float, int64_t>, ir::ValueId> first;
  std::vector<bool> dead(graph.nodes.size(), false);
  int merged = 0;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const ir::Node& q = graph.nodes[n];
    const std::optional<std::pair<float, int64_t>> enc = uint8_quantize_params(graph, q);
    if (!enc || graph.value(q.outputs[0]).is_graph_output) continue;
    const auto [it, inserted] =
        first.try_emplace({q.inputs[0], enc->first, enc->second}, q.outputs[0]);
    if (inserted) continue;
    ir::replace_uses(graph, q.outputs[0], it->second);
    dead[n] = true;
    ++merged;
  }
  ir::remove_nodes(graph, dead);
  return merged;
}

}  // namespace kiln::quant
