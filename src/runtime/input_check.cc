#include "runtime/input_check.h"

#include <fmt/format.h>

namespace kiln::runtime {
namespace {

std::string input_names(const ir::Graph& graph) {
  std::vector<std::string> names;
  for (ir::ValueId v : graph.inputs) names.push_back(graph.value(v).name);
  return fmt::format("{}", fmt::join(names, ", "));
}

Status check_one(const ir::Value& decl, const Tensor& t,
                 std::map<std::string, std::pair<int64_t, std::string>>& symbols) {
  const ir::TensorDesc& d = decl.desc;
  if (d.dtype != t.dtype()) {
    return invalid_argument("input '{}': expected dtype {}, got {}", decl.name, dtype_name(d.dtype),
                            dtype_name(t.dtype()));
  }
  if (!d.has_rank()) return Status::ok();
  if (d.rank() != t.rank()) {
    return invalid_argument("input '{}': expected shape {} (rank {}), got {} (rank {})", decl.name,
                            d.to_string(), d.rank(), t.desc(), t.rank());
  }
  for (int i = 0; i < t.rank(); ++i) {
    const ir::Dim& dim = d.dim(i);
    if (dim.is_known() && dim.value != t.dim(i)) {
      return invalid_argument("input '{}': expected shape {}, got {} (dim {} must be {})",
                              decl.name, d.to_string(), t.desc(), i, dim.value);
    }
    if (!dim.symbol.empty()) {
      auto [it, inserted] = symbols.try_emplace(dim.symbol, t.dim(i), decl.name);
      if (!inserted && it->second.first != t.dim(i)) {
        return invalid_argument(
            "input '{}': dim {} ('{}') is {} but input '{}' gave '{}' the value {}", decl.name, i,
            dim.symbol, t.dim(i), it->second.second, dim.symbol, it->second.first);
      }
    }
  }
  return Status::ok();
}

}  // namespace

Status check_inputs(const ir::Graph& graph, const NamedTensors& inputs) {
  for (const auto& [name, tensor] : inputs) {
    const ir::ValueId v = graph.find_value(name);
    if (v == ir::kNoValue || !graph.value(v).is_graph_input) {
      return invalid_argument("unknown input '{}'; the model's inputs are: {}", name,
                              input_names(graph));
    }
  }
  std::map<std::string, std::pair<int64_t, std::string>> symbols;
  for (ir::ValueId v : graph.inputs) {
    const ir::Value& decl = graph.value(v);
    auto it = inputs.find(decl.name);
    if (it == inputs.end()) {
      if (decl.initializer) continue;  // defaulted by its initializer
      return invalid_argument("missing input '{}' ({})", decl.name, decl.desc.to_string());
    }
    KILN_RETURN_IF_ERROR(check_one(decl, it->second, symbols));
  }
  return Status::ok();
}

}  // namespace kiln::runtime
