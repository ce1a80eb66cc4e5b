#include "ir/graph_edit.h"

#include <fmt/format.h>

namespace kiln::ir {

GraphIndex::GraphIndex(const Graph& graph)
    : graph_(&graph), producers_(graph.producers()), uses_(graph.values.size()) {
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (node.inputs[i] == kNoValue) continue;
      uses_[static_cast<size_t>(node.inputs[i])].push_back(
          Use{static_cast<int>(n), static_cast<int>(i)});
    }
  }
}

size_t GraphIndex::num_readers(ValueId v) const {
  return uses(v).size() + (graph_->value(v).is_graph_output ? 1 : 0);
}

bool GraphIndex::has_single_reader(ValueId v) const {
  return uses(v).size() == 1 && !graph_->value(v).is_graph_output;
}

std::string unique_value_name(const Graph& graph, std::string_view hint) {
  if (graph.find_value(hint) == kNoValue) return std::string(hint);
  for (int i = 1;; ++i) {
    std::string name = fmt::format("{}__{}", hint, i);
    if (graph.find_value(name) == kNoValue) return name;
  }
}

NodeNames::NodeNames(const Graph& graph) {
  for (const Node& n : graph.nodes) taken_.insert(n.name);
}

std::string NodeNames::take(std::string_view hint, std::string_view sep) {
  std::string name(hint);
  for (int k = 1; taken_.count(name) != 0; ++k) name = fmt::format("{}{}{}", hint, sep, k);
  taken_.insert(name);
  return name;
}

ValueId add_constant(Graph& graph, std::string_view hint, Tensor value) {
  const ValueId id = graph.add_value(unique_value_name(graph, hint),
                                     TensorDesc::of_dims(value.dtype(), value.dims()));
  graph.value(id).initializer = std::move(value);
  return id;
}

void replace_uses(Graph& graph, ValueId from, ValueId to) {
  for (Node& node : graph.nodes) {
    for (ValueId& v : node.inputs) {
      if (v == from) v = to;
    }
  }
}

void replace_output_value(Graph& graph, ValueId from, ValueId to) {
  assert(graph.value(from).is_graph_output && !graph.value(to).is_graph_output);
  for (Node& node : graph.nodes) {
    for (ValueId& v : node.outputs) {
      if (v == to) v = from;
    }
  }
  replace_uses(graph, to, from);
  // The output keeps its name; it takes the desc the surviving producer computes.
  graph.value(from).desc = graph.value(to).desc;
}

void remove_nodes(Graph& graph, const std::vector<bool>& dead) {
  std::vector<Node> kept;
  kept.reserve(graph.nodes.size());
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (!dead[n]) kept.push_back(std::move(graph.nodes[n]));
  }
  graph.nodes = std::move(kept);
}

int remove_dead_nodes(Graph& graph) {
  std::vector<bool> live_value(graph.values.size(), false);
  for (ValueId v : graph.outputs) live_value[static_cast<size_t>(v)] = true;
  std::vector<bool> dead(graph.nodes.size(), true);
  int removed = 0;
  for (size_t n = graph.nodes.size(); n-- > 0;) {
    const Node& node = graph.nodes[n];
    bool needed = false;
    for (ValueId v : node.outputs) {
      if (v != kNoValue && live_value[static_cast<size_t>(v)]) needed = true;
    }
    if (!needed) {
      ++removed;
      continue;
    }
    dead[n] = false;
    for (ValueId v : node.inputs) {
      if (v != kNoValue) live_value[static_cast<size_t>(v)] = true;
    }
  }
  remove_nodes(graph, dead);
  return removed;
}

void add_origins(Node& into, const Node& from, bool from_runs_first) {
  std::vector<std::string> a = from.origins();
  std::vector<std::string> b = into.origins();
  if (!from_runs_first) std::swap(a, b);
  a.insert(a.end(), b.begin(), b.end());
  into.fused_from = std::move(a);
}

namespace {

std::vector<bool> referenced_values(const Graph& graph) {
  std::vector<bool> used(graph.values.size(), false);
  auto mark = [&](ValueId v) {
    if (v != kNoValue) used[static_cast<size_t>(v)] = true;
  };
  for (const Node& node : graph.nodes) {
    for (ValueId v : node.inputs) mark(v);
    for (ValueId v : node.outputs) mark(v);
  }
  for (ValueId v : graph.inputs) mark(v);
  for (ValueId v : graph.outputs) mark(v);
  return used;
}

}  // namespace

int compact_values(Graph& graph) {
  const std::vector<bool> used = referenced_values(graph);
  // A fresh graph rebuilds the name index, which only add_value maintains.
  Graph out;
  out.name = std::move(graph.name);
  out.opset_imports = std::move(graph.opset_imports);
  out.producer = std::move(graph.producer);
  std::vector<ValueId> remap(graph.values.size(), kNoValue);
  for (size_t v = 0; v < graph.values.size(); ++v) {
    if (!used[v]) continue;
    remap[v] = out.add_value(graph.values[v].name);
    out.value(remap[v]) = std::move(graph.values[v]);
  }
  const auto renumber = [&](std::vector<ValueId>& ids) {
    for (ValueId& v : ids) {
      if (v != kNoValue) v = remap[static_cast<size_t>(v)];
    }
  };
  out.nodes = std::move(graph.nodes);
  for (Node& node : out.nodes) {
    renumber(node.inputs);
    renumber(node.outputs);
  }
  out.inputs = std::move(graph.inputs);
  out.outputs = std::move(graph.outputs);
  renumber(out.inputs);
  renumber(out.outputs);
  const auto dropped = static_cast<int>(graph.values.size() - out.values.size());
  graph = std::move(out);
  return dropped;
}

}  // namespace kiln::ir
