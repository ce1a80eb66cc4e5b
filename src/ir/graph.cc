#include "ir/graph.h"

#include <fmt/format.h>

namespace kiln::ir {

ValueId Graph::add_value(std::string value_name, TensorDesc desc) {
  const auto id = static_cast<ValueId>(values.size());
  by_name_[value_name] = id;
  values.push_back(Value{std::move(value_name), std::move(desc), std::nullopt, false, false});
  return id;
}

ValueId Graph::find_value(std::string_view value_name) const {
  auto it = by_name_.find(value_name);
  return it == by_name_.end() ? kNoValue : it->second;
}

std::vector<int> Graph::producers() const {
  std::vector<int> out(values.size(), -1);
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (ValueId v : nodes[n].outputs) {
      if (v != kNoValue) out[static_cast<size_t>(v)] = static_cast<int>(n);
    }
  }
  return out;
}

Status Graph::verify() const {
  const auto num_values = static_cast<ValueId>(values.size());
  std::vector<bool> available(values.size(), false);
  std::vector<bool> produced(values.size(), false);
  for (ValueId v : inputs) available[static_cast<size_t>(v)] = true;
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i].initializer) available[i] = true;
  }
  for (const Node& node : nodes) {
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId v = node.inputs[i];
      if (v == kNoValue) continue;
      if (v < 0 || v >= num_values) {
        return internal_error("node '{}' ({}): input {} has a dangling value id {}", node.name,
                              node.op_type, i, v);
      }
      if (!available[static_cast<size_t>(v)]) {
        return invalid_model(
            "node '{}' ({}): input {} '{}' is not produced by any earlier node, graph input or "
            "initializer",
            node.name, node.op_type, i, values[static_cast<size_t>(v)].name);
      }
    }
    for (ValueId v : node.outputs) {
      if (v == kNoValue) continue;
      if (v < 0 || v >= num_values) {
        return internal_error("node '{}' ({}): dangling output id {}", node.name, node.op_type, v);
      }
      auto idx = static_cast<size_t>(v);
      if (produced[idx] || values[idx].initializer || values[idx].is_graph_input) {
        return invalid_model("node '{}' ({}): output '{}' is already defined elsewhere", node.name,
                             node.op_type, values[idx].name);
      }
      produced[idx] = available[idx] = true;
    }
  }
  for (ValueId v : outputs) {
    if (!available[static_cast<size_t>(v)]) {
      return invalid_model("graph output '{}' is not produced by any node",
                           values[static_cast<size_t>(v)].name);
    }
  }
  return Status::ok();
}

std::string Graph::dump() const {
  std::string out;
  auto name_of = [&](ValueId v) {
    if (v == kNoValue) return std::string("<none>");
    const Value& val = value(v);
    return fmt::format("{}:{}", val.name, val.desc.to_string());
  };
  for (ValueId v : inputs) out += fmt::format("input {}\n", name_of(v));
  for (const Node& node : nodes) {
    std::vector<std::string> ins, outs;
    for (ValueId v : node.inputs) ins.push_back(name_of(v));
    for (ValueId v : node.outputs) outs.push_back(name_of(v));
    out += fmt::format("{} = {}({}) -> {}\n", node.name, node.op_type, fmt::join(ins, ", "),
                       fmt::join(outs, ", "));
  }
  for (ValueId v : outputs) out += fmt::format("output {}\n", name_of(v));
  return out;
}

}  // namespace kiln::ir
