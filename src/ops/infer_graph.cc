#include "ops/infer_graph.h"

#include <fmt/format.h>

#include <set>

#include "ops/dims_values.h"
#include "ops/evaluate.h"

namespace kiln::ops {
namespace {

// Tensors up to this size are evaluated during inference when all their inputs are known.
constexpr int64_t kMaxPropagatedElements = 1024;

std::string versions_text(const OpDef& def) {
  return fmt::format("{}", fmt::join(def.since_versions, ", "));
}

void check_attrs(const ir::Node& node, const OpDef& def, std::vector<std::string>& problems) {
  for (const auto& [name, value] : node.attrs.all()) {
    const AttrSpec* spec = nullptr;
    for (const AttrSpec& s : def.attrs) {
      if (s.name == name) spec = &s;
    }
    if (spec == nullptr) {
      problems.push_back(
          fmt::format("node '{}' ({}): unknown attribute '{}'", node.name, node.op_type, name));
    } else if (spec->type != ir::attr_value_type(value)) {
      problems.push_back(fmt::format("node '{}' ({}): attribute '{}' must be of type {}, got {}",
                                     node.name, node.op_type, name, ir::attr_type_name(spec->type),
                                     ir::attr_type_name(ir::attr_value_type(value))));
    }
  }
}

void check_arity(const ir::Node& node, const OpDef& def, std::vector<std::string>& problems) {
  const auto n_in = static_cast<int>(node.inputs.size());
  const auto n_out = static_cast<int>(node.outputs.size());
  if (n_in < def.min_inputs || n_in > def.max_inputs) {
    problems.push_back(fmt::format(
        "node '{}' ({}): has {} inputs, expected {}..{}", node.name, node.op_type, n_in,
        def.min_inputs,
        def.max_inputs == kVariadic ? std::string("n") : std::to_string(def.max_inputs)));
  }
  if (n_out < def.min_outputs || n_out > def.max_outputs) {
    problems.push_back(fmt::format("node '{}' ({}): has {} outputs, expected {}..{}", node.name,
                                   node.op_type, n_out, def.min_outputs, def.max_outputs));
  }
}

// A declared dim (from the model's value_info/outputs) agrees with an inferred one unless both are
// known numbers that differ.
bool dims_compatible(const ir::TensorDesc& declared, const ir::TensorDesc& inferred) {
  if (!declared.has_rank() || !inferred.has_rank()) return true;
  if (declared.rank() != inferred.rank()) return false;
  for (int i = 0; i < declared.rank(); ++i) {
    const auto& a = declared.dim(i);
    const auto& b = inferred.dim(i);
    if (a.is_known() && b.is_known() && a.value != b.value) return false;
  }
  return true;
}

// Keeps what is known from both: inferred numbers win; declared symbols fill unknown inferred dims.
ir::TensorDesc merge_descs(const ir::TensorDesc& declared, ir::TensorDesc inferred) {
  if (!inferred.has_rank()) {
    if (declared.has_rank()) inferred.shape = declared.shape;
    return inferred;
  }
  if (!declared.has_rank()) return inferred;
  for (int i = 0; i < inferred.rank(); ++i) {
    auto& d = (*inferred.shape)[static_cast<size_t>(i)];
    if (!d.is_known() && d.symbol.empty()) d = declared.dim(i);
  }
  return inferred;
}

}  // namespace

ResolvedOp resolve_op(const ir::Node& node) {
  const OpDef* def = op_registry().find(node.domain, node.op_type);
  return {def, def ? resolve_since_version(*def, node.opset) : 0};
}

Status check_graph_ops(const ir::Graph& graph) {
  std::vector<std::string> problems;
  std::set<std::string> unknown_ops;
  for (const ir::Node& node : graph.nodes) {
    const OpDef* def = op_registry().find(node.domain, node.op_type);
    const std::string qualified =
        node.domain.empty() ? node.op_type : fmt::format("{}::{}", node.domain, node.op_type);
    if (def == nullptr) {
      unknown_ops.insert(qualified);
      problems.push_back(fmt::format("node '{}': op {} is not supported", node.name, qualified));
      continue;
    }
    if (resolve_since_version(*def, node.opset) == 0) {
      problems.push_back(
          fmt::format("node '{}': op {} does not exist at opset {} (kiln implements versions {})",
                      node.name, qualified, node.opset, versions_text(*def)));
      continue;
    }
    check_arity(node, *def, problems);
    check_attrs(node, *def, problems);
  }
  if (problems.empty()) return Status::ok();
  const StatusCode code =
      unknown_ops.empty() ? StatusCode::kInvalidModel : StatusCode::kUnsupported;
  std::string head = unknown_ops.empty()
                         ? fmt::format("{} problem(s) with the model's nodes", problems.size())
                         : fmt::format("unsupported op(s): {}", fmt::join(unknown_ops, ", "));
  return Status(code, fmt::format("{}\n  {}", head, fmt::join(problems, "\n  ")));
}

Result<NodeInference> infer_node(const ir::Node& node, const ResolvedOp& op,
                                 const std::vector<const ir::TensorDesc*>& inputs,
                                 const std::vector<const Tensor*>& values,
                                 const std::vector<const ir::SymInts*>& dims_values) {
  InferContext ctx(node, op.since_version, inputs, values, dims_values);
  KILN_RETURN_IF_ERROR(op.def->infer(ctx));
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] != ir::kNoValue && ctx.outputs()[i].dtype == DType::kUndefined) {
      return internal_error("node '{}' ({}): shape function left output {} undefined", node.name,
                            node.op_type, i);
    }
  }
  std::optional<ir::SymInts> traced = propagate_dims_value(ctx);
  return NodeInference{std::move(ctx.outputs()), std::move(ctx.output_values()), std::move(traced)};
}

namespace {

// Evaluates a node whose inputs are all known and small, so that shape chains become static.
std::vector<std::optional<Tensor>> try_evaluate(const ir::Node& node, const ResolvedOp& op,
                                                const std::vector<const Tensor*>& values,
                                                const std::vector<ir::TensorDesc>& outputs) {
  std::vector<std::optional<Tensor>> out(node.outputs.size());
  for (size_t i = 0; i < values.size(); ++i) {
    if (node.inputs[i] == ir::kNoValue) continue;
    if (values[i] == nullptr || values[i]->numel() > kMaxPropagatedElements) return out;
  }
  for (const auto& d : outputs) {
    if (d.dtype != DType::kUndefined &&
        (!d.is_static() || dims_numel(d.static_dims()) > kMaxPropagatedElements)) {
      return out;
    }
  }
  Result<std::vector<Tensor>> run = run_node_kernel(node, op, values, outputs);
  if (!run.is_ok()) return out;  // the run-time check will report it
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] != ir::kNoValue) out[i] = (*run)[i];
  }
  return out;
}

}  // namespace

Status infer_graph_shapes(ir::Graph& graph) {
  std::vector<std::optional<Tensor>> known(graph.values.size());
  std::vector<std::optional<ir::SymInts>> traced(graph.values.size());
  for (size_t v = 0; v < graph.values.size(); ++v) {
    if (const Tensor* c = graph.values[v].constant()) known[v] = *c;
  }
  for (const ir::Node& node : graph.nodes) {
    const ResolvedOp op = resolve_op(node);
    std::vector<const ir::TensorDesc*> descs;
    std::vector<const Tensor*> values;
    std::vector<const ir::SymInts*> dims_values;
    static const ir::TensorDesc kAbsent;
    for (ir::ValueId v : node.inputs) {
      const auto at = static_cast<size_t>(v);
      descs.push_back(v == ir::kNoValue ? &kAbsent : &graph.value(v).desc);
      values.push_back(v == ir::kNoValue || !known[at] ? nullptr : &*known[at]);
      dims_values.push_back(v == ir::kNoValue || !traced[at] ? nullptr : &*traced[at]);
    }
    KILN_ASSIGN_OR_RETURN(NodeInference inf, infer_node(node, op, descs, values, dims_values));
    std::vector<std::optional<Tensor>> evaluated = try_evaluate(node, op, values, inf.outputs);
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      const ir::ValueId v = node.outputs[i];
      if (v == ir::kNoValue) continue;
      ir::Value& val = graph.value(v);
      if (val.desc.dtype != DType::kUndefined && val.desc.dtype != inf.outputs[i].dtype) {
        return invalid_model("node '{}' ({}): output '{}' is declared {} but the op produces {}",
                             node.name, node.op_type, val.name, val.desc.to_string(),
                             inf.outputs[i].to_string());
      }
      if (!dims_compatible(val.desc, inf.outputs[i])) {
        return invalid_model("node '{}' ({}): output '{}' is declared {} but the op produces {}",
                             node.name, node.op_type, val.name, val.desc.to_string(),
                             inf.outputs[i].to_string());
      }
      val.desc = merge_descs(val.desc, std::move(inf.outputs[i]));
      if (inf.values[i]) {
        known[static_cast<size_t>(v)] = std::move(inf.values[i]);
      } else if (evaluated[i]) {
        known[static_cast<size_t>(v)] = std::move(evaluated[i]);
      } else if (i == 0 && inf.dims_value) {
        traced[static_cast<size_t>(v)] = std::move(inf.dims_value);
      }
    }
  }
  return Status::ok();
}

}  // namespace kiln::ops
