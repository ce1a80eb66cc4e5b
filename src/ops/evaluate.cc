#include "ops/evaluate.h"

#include <fmt/format.h>

#include <new>

namespace kiln::ops {
namespace {

Status check_output(const ir::Node& node, size_t i, const ir::TensorDesc& inferred,
                    const Tensor& t) {
  if (!t.defined()) {
    return internal_error("node '{}' ({}): kernel did not produce output {}", node.name,
                          node.op_type, i);
  }
  bool ok = t.dtype() == inferred.dtype;
  if (ok && inferred.has_rank()) {
    ok = inferred.rank() == t.rank();
    for (int d = 0; ok && d < t.rank(); ++d) {
      ok = !inferred.dim(d).is_known() || inferred.dim(d).value == t.dim(d);
    }
  }
  if (!ok) {
    return internal_error("node '{}' ({}): output {} is {} but shape inference said {}", node.name,
                          node.op_type, i, t.desc(), inferred.to_string());
  }
  return Status::ok();
}

std::string describe(const std::vector<ir::TensorDesc>& descs) {
  std::vector<std::string> parts;
  for (const auto& d : descs) parts.push_back(d.to_string());
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

std::vector<ir::TensorDesc> descs_of(const std::vector<const Tensor*>& values) {
  std::vector<ir::TensorDesc> descs(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] != nullptr)
      descs[i] = ir::TensorDesc::of_dims(values[i]->dtype(), values[i]->dims());
  }
  return descs;
}

Result<NodeInference> infer_node_on_values(const ir::Node& node, const ResolvedOp& op,
                                           const std::vector<const Tensor*>& values) {
  const std::vector<ir::TensorDesc> descs = descs_of(values);
  std::vector<const ir::TensorDesc*> ptrs;
  for (const ir::TensorDesc& d : descs) ptrs.push_back(&d);
  return infer_node(node, op, ptrs, values);
}

Result<std::vector<Tensor>> run_node_kernel(const ir::Node& node, const ResolvedOp& op,
                                            const std::vector<const Tensor*>& inputs,
                                            const std::vector<ir::TensorDesc>& output_descs) {
  RunContext ctx(node, op.since_version, inputs, output_descs);
  try {
    KILN_RETURN_IF_ERROR(op.def->run(ctx));
  } catch (const std::bad_alloc&) {
    // A shape within limits can still exceed this machine's memory; say where, don't abort.
    return invalid_argument("node '{}' ({}): out of memory while computing outputs {}", node.name,
                            node.op_type, describe(output_descs));
  }
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] == ir::kNoValue) continue;
    KILN_RETURN_IF_ERROR(check_output(node, i, output_descs[i], ctx.outputs()[i]));
  }
  return std::move(ctx.outputs());
}

}  // namespace kiln::ops
