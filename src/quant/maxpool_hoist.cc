#include "quant/maxpool_hoist.h"

#include <fmt/format.h>

#include <algorithm>

#include "ir/graph_edit.h"
#include "ops/infer_graph.h"
#include "quant/requantize_fusion.h"
#include "quant/value_sign.h"

namespace kiln::quant {
namespace {

// A MaxPool without the Indices output, of an opset version that takes uint8 (12 and later).
bool uint8_capable_maxpool(const ir::Node& n) {
  const bool indices = n.outputs.size() > 1 && n.outputs[1] != ir::kNoValue;
  if (!n.domain.empty() || n.op_type != "MaxPool" || indices || n.inputs.empty()) return false;
  return ops::resolve_op(n).since_version >= 12;
}

// Rewrites the first MaxPool it can; false when none is left. The QuantizeLinear moves to just
// before the pooling so that the nodes stay in topological order.
bool hoist_one(ir::Graph& graph, std::vector<std::string>& log) {
  const ir::GraphIndex index(graph);
  for (size_t m = 0; m < graph.nodes.size(); ++m) {
    const ir::Node& pool = graph.nodes[m];
    if (!uint8_capable_maxpool(pool) || graph.value(pool.inputs[0]).desc.dtype != DType::kF32)
      continue;
    const std::optional<Uint8Readers> readers = uint8_readers(graph, index, pool.outputs[0]);
    if (!readers) continue;
    const int qi = readers->quantize;
    const ir::ValueId x = pool.inputs[0];
    // x -> Q -> xq -> MaxPool -> (Q's old output): readers of the uint8 tensor are unchanged.
    const ir::ValueId xq = add_uint8_value(graph, x);
    ir::Node& q = graph.nodes[static_cast<size_t>(qi)];
    const ir::ValueId pooled_u8 = q.outputs[0];
    q.inputs[0] = x;
    q.outputs[0] = xq;
    graph.nodes[m].inputs[0] = xq;
    graph.nodes[m].outputs[0] = pooled_u8;
    const auto [scale, zero] = *uint8_quantize_params(graph, q);
    read_residual_as_uint8(graph, readers->residual_of, pooled_u8, scale, zero);
    log.push_back(fmt::format("layer '{}' pools uint8: '{}' is quantized before it",
                              graph.nodes[m].name, graph.value(x).name));
    const auto first = graph.nodes.begin() + static_cast<std::ptrdiff_t>(m);
    const auto q_at = graph.nodes.begin() + qi;
    std::rotate(first, q_at, q_at + 1);
    return true;
  }
  return false;
}

}  // namespace

int hoist_quantize_over_maxpool(ir::Graph& graph, std::vector<std::string>& log) {
  int hoisted = 0;
  while (hoist_one(graph, log)) ++hoisted;
  return hoisted;
}

}  // namespace kiln::quant
