#include "runtime/reference_executor.h"

#include <fmt/format.h>
#include <unistd.h>

#include <limits>

#include "ops/evaluate.h"
#include "ops/infer_graph.h"

namespace kiln::runtime {
namespace {

uint64_t default_max_tensor_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return std::numeric_limits<uint64_t>::max();  // unknown
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size) / 2;
}

}  // namespace

ReferenceExecutor::ReferenceExecutor(const ir::Graph& graph, uint64_t max_tensor_bytes)
    : graph_(&graph), max_tensor_bytes_(max_tensor_bytes), release_after_(graph.nodes.size()) {
  std::vector<int> last_use(graph.values.size(), -1);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    for (ir::ValueId v : graph.nodes[n].inputs) {
      if (v != ir::kNoValue) last_use[static_cast<size_t>(v)] = static_cast<int>(n);
    }
  }
  for (size_t v = 0; v < graph.values.size(); ++v) {
    if (last_use[v] >= 0 && !graph.values[v].is_graph_output) {
      release_after_[static_cast<size_t>(last_use[v])].push_back(static_cast<ir::ValueId>(v));
    }
  }
}

Result<ReferenceExecutor> ReferenceExecutor::create(const ir::Graph& graph,
                                                    ExecutorOptions options) {
  KILN_RETURN_IF_ERROR(graph.verify());
  KILN_RETURN_IF_ERROR(ops::check_graph_ops(graph));
  return ReferenceExecutor(
      graph, options.max_tensor_bytes != 0 ? options.max_tensor_bytes : default_max_tensor_bytes());
}

Status ReferenceExecutor::check_output_size(const ir::Node& node, size_t i,
                                            const ir::TensorDesc& desc) const {
  // check_dims has bounded the byte count, so this cannot overflow.
  const uint64_t bytes = static_cast<uint64_t>(dims_numel(desc.static_dims())) *
                         static_cast<uint64_t>(dtype_size(desc.dtype));
  if (bytes <= max_tensor_bytes_) return Status::ok();
  return Status(
      StatusCode::kInvalidArgument,
      fmt::format("node '{}' ({}): output {} '{}' {} needs {} MiB, more than the "
                  "executor's limit of {} MiB per tensor",
                  node.name, node.op_type, i, graph_->value(node.outputs[i]).name, desc.to_string(),
                  (bytes + (1 << 20) - 1) >> 20, max_tensor_bytes_ >> 20));
}

Status ReferenceExecutor::run_node(const ir::Node& node,
                                   std::vector<std::optional<Tensor>>& values) const {
  const ops::ResolvedOp op = ops::resolve_op(node);
  std::vector<const Tensor*> inputs;
  for (const ir::ValueId v : node.inputs) {
    if (v == ir::kNoValue) {
      inputs.push_back(nullptr);
      continue;
    }
    const auto& t = values[static_cast<size_t>(v)];
    if (!t) {
      return internal_error("node '{}' ({}): input '{}' has no value", node.name, node.op_type,
                            graph_->value(v).name);
    }
    inputs.push_back(&*t);
  }
  KILN_ASSIGN_OR_RETURN(ops::NodeInference inf, ops::infer_node_on_values(node, op, inputs));
  for (size_t i = 0; i < inf.outputs.size(); ++i) {
    if (node.outputs[i] == ir::kNoValue || !inf.outputs[i].is_static()) continue;
    const std::string what = fmt::format("node '{}' ({}): output {} '{}'", node.name, node.op_type,
                                         i, graph_->value(node.outputs[i]).name);
    KILN_RETURN_IF_ERROR(check_dims(inf.outputs[i].static_dims(), inf.outputs[i].dtype, what));
    KILN_RETURN_IF_ERROR(check_output_size(node, i, inf.outputs[i]));
  }
  KILN_ASSIGN_OR_RETURN(std::vector<Tensor> outputs,
                        ops::run_node_kernel(node, op, inputs, inf.outputs));
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] != ir::kNoValue) values[static_cast<size_t>(node.outputs[i])] = outputs[i];
  }
  if (observer_) observer_(node, outputs);
  return Status::ok();
}

Result<std::vector<Tensor>> ReferenceExecutor::run(const NamedTensors& inputs) const {
  KILN_RETURN_IF_ERROR(check_inputs(*graph_, inputs));
  std::vector<std::optional<Tensor>> values(graph_->values.size());
  for (size_t v = 0; v < graph_->values.size(); ++v) {
    if (graph_->values[v].initializer) values[v] = *graph_->values[v].initializer;
  }
  for (ir::ValueId v : graph_->inputs) {
    auto it = inputs.find(graph_->value(v).name);
    if (it != inputs.end()) values[static_cast<size_t>(v)] = it->second;
  }
  for (size_t n = 0; n < graph_->nodes.size(); ++n) {
    KILN_RETURN_IF_ERROR(run_node(graph_->nodes[n], values));
    for (ir::ValueId v : release_after_[n]) values[static_cast<size_t>(v)].reset();
  }
  std::vector<Tensor> outputs;
  for (ir::ValueId v : graph_->outputs) outputs.push_back(*values[static_cast<size_t>(v)]);
  return outputs;
}

}  // namespace kiln::runtime
