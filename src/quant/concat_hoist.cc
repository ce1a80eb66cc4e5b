#include "quant/concat_hoist.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "ir/graph_edit.h"
#include "quant/requantize_fusion.h"
#include "quant/value_sign.h"

namespace kiln::quant {
namespace {

bool float_concat(const ir::Graph& g, const ir::Node& n) {
  if (!n.domain.empty() || n.op_type != "Concat" || n.inputs.empty() || n.outputs.size() != 1) {
    return false;
  }
  for (ir::ValueId v : n.inputs) {
    if (v == ir::kNoValue || g.value(v).desc.dtype != DType::kF32) return false;
  }
  return g.value(n.outputs[0]).desc.dtype == DType::kF32;
}

// The QuantizeLinear nodes `concat`'s inputs need with quantize node q's encoding; its inputs
// become their outputs (merge_duplicate_quantizes then drops any an input had already).
std::vector<ir::Node> quantize_inputs(ir::Graph& graph, size_t concat, const ir::Node& q) {
  std::vector<ir::Node> added;
  std::map<ir::ValueId, ir::ValueId> done;
  std::set<std::string> names;  // the nodes' names, the added ones' too
  for (const ir::Node& n : graph.nodes) names.insert(n.name);
  std::vector<ir::ValueId> inputs = graph.nodes[concat].inputs;
  for (ir::ValueId& x : inputs) {
    if (auto it = done.find(x); it != done.end()) {
      x = it->second;
      continue;
    }
    const ir::ValueId xq = add_uint8_value(graph, x);
    ir::Node n;
    const std::string hint =
        fmt::format("{}/QuantizeLinear_{}", graph.nodes[concat].name, added.size());
    n.name = hint;
    for (int k = 1; names.count(n.name); ++k) n.name = fmt::format("{}_{}", hint, k);
    names.insert(n.name);
    n.op_type = "QuantizeLinear";
    n.opset = q.opset;
    n.inputs = {x, q.inputs[1], q.inputs[2]};
    n.outputs = {xq};
    added.push_back(std::move(n));
    done[x] = xq;
    x = xq;
  }
  graph.nodes[concat].inputs = std::move(inputs);
  return added;
}

// Rewrites the first Concat it can; false when none is left.
bool hoist_concat(ir::Graph& graph, std::vector<std::string>& log) {
  const ir::GraphIndex index(graph);
  for (size_t c = 0; c < graph.nodes.size(); ++c) {
    if (!float_concat(graph, graph.nodes[c])) continue;
    const std::optional<Uint8Readers> readers =
        uint8_readers(graph, index, graph.nodes[c].outputs[0]);
    if (!readers) continue;
    const auto qi = static_cast<size_t>(readers->quantize);
    const ir::Node q = graph.nodes[qi];  // a copy: the node goes, its scale and zero stay in use
    const auto [scale, zero] = *uint8_quantize_params(graph, q);
    std::vector<ir::Node> added = quantize_inputs(graph, c, q);
    graph.nodes[c].outputs[0] = q.outputs[0];
    read_residual_as_uint8(graph, readers->residual_of, q.outputs[0], scale, zero);
    log.push_back(fmt::format(
        "layer '{}' concatenates uint8: its {} input(s) quantized with its output's encoding "
        "(scale {:.6g}, zero point {}), {} QuantizeLinear(s) added",
        graph.nodes[c].name, graph.nodes[c].inputs.size(), scale, zero, added.size()));
    graph.nodes.erase(graph.nodes.begin() + static_cast<std::ptrdiff_t>(qi));  // qi > c
    graph.nodes.insert(graph.nodes.begin() + static_cast<std::ptrdiff_t>(c),
                       std::make_move_iterator(added.begin()),
                       std::make_move_iterator(added.end()));
    return true;
  }
  return false;
}

}  // namespace

int hoist_quantize_over_concat(ir::Graph& graph, std::vector<std::string>& log) {
  int hoisted = 0;
  while (hoist_concat(graph, log)) ++hoisted;
  return hoisted;
}

}  // namespace kiln::quant
