#include "passes/dead_node_elimination.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "ir/graph_edit.h"

namespace kiln::passes {
namespace dead_node_elimination {
namespace {

constexpr std::string_view kName = "dead_node_elimination";

// Logs name at most this many dropped initializers; the rest are counted.
constexpr size_t kMaxNamesLogged = 8;

void remove_dead(ir::Graph& graph, PassContext& ctx) {
  const std::vector<ir::Node> nodes_before =
      graph.nodes;  // attribute tensors are shared, not copied
  if (ir::remove_dead_nodes(graph) == 0) return;
  std::set<std::string> alive;
  for (const ir::Node& node : graph.nodes) alive.insert(node.name);
  for (const ir::Node& node : nodes_before) {
    if (alive.count(node.name) != 0) continue;
    ctx.log.add(kName, fmt::format("removed {} ({}): nothing reads its outputs",
                                   join_origins(node.origins()), node.op_type));
  }
}

// Drops initializers no node reads. Graph outputs and graph inputs (whose initializer is a default
// the user may override) are kept: they are part of the model's interface.
void drop_unused_initializers(ir::Graph& graph, PassContext& ctx) {
  std::vector<bool> read(graph.values.size(), false);
  for (const ir::Node& node : graph.nodes) {
    for (ir::ValueId v : node.inputs) {
      if (v != ir::kNoValue) read[static_cast<size_t>(v)] = true;
    }
  }
  std::vector<std::string> names;
  uint64_t bytes = 0;
  for (size_t v = 0; v < graph.values.size(); ++v) {
    ir::Value& val = graph.values[v];
    if (!val.initializer || read[v] || val.is_graph_input || val.is_graph_output) continue;
    names.push_back(val.name);
    bytes += val.initializer->nbytes();
    val.initializer.reset();
  }
  if (names.empty()) return;
  const size_t shown = std::min(names.size(), kMaxNamesLogged);
  std::string listed = fmt::format("{}", fmt::join(names.begin(), names.begin() + shown, ", "));
  if (shown < names.size()) listed += fmt::format(" and {} more", names.size() - shown);
  ctx.log.add(kName, fmt::format("dropped {} unused initializer(s), {} bytes: {}", names.size(),
                                 bytes, listed));
}

Status run(ir::Graph& graph, PassContext& ctx) {
  remove_dead(graph, ctx);
  drop_unused_initializers(graph, ctx);
  ir::compact_values(graph);
  return Status::ok();
}

}  // namespace
}  // namespace dead_node_elimination

const PassDef& dead_node_elimination_pass() {
  static const PassDef def{dead_node_elimination::kName,
                           "removes nodes nobody reads and initializers no node reads",
                           dead_node_elimination::run};
  return def;
}

}  // namespace kiln::passes
