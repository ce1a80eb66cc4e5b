#include "passes/matmul_add_fusion.h"

#include "ops/kiln_fused.h"
#include "passes/fusion_util.h"

namespace kiln::passes {
namespace matmul_add_fusion {
namespace {

constexpr std::string_view kName = "matmul_add_fusion";

// A bias that broadcasts to [1, N]: it adds one value per output column, whatever A's rank.
bool is_row_bias(const Tensor& c, int64_t n) {
  const Dims& d = c.dims();
  if (d.size() > 2) return false;
  if (d.size() == 2 && d[0] != 1) return false;
  return d.empty() || d.back() == n || d.back() == 1;
}

std::optional<Fusion> find(const ir::Graph& graph, const ir::GraphIndex& index, int n) {
  const ir::Node& mm = graph.nodes[static_cast<size_t>(n)];
  if (!is_onnx_op(mm, "MatMul") || mm.inputs.size() != 2 || mm.outputs.size() != 1) {
    return std::nullopt;
  }
  const ir::TensorDesc& a = graph.value(mm.inputs[0]).desc;
  const Tensor* b = constant_tensor(graph, index, mm.inputs[1]);
  if (!is_fusable_dtype(a.dtype) || a.rank() < 2 || b == nullptr || b->rank() != 2) {
    return std::nullopt;
  }
  const ir::ValueId y = mm.outputs[0];
  if (!index.has_single_reader(y)) return std::nullopt;
  const int add_index = index.uses(y)[0].node;
  const ir::Node& add = graph.nodes[static_cast<size_t>(add_index)];
  if (!is_onnx_op(add, "Add") || add.inputs.size() != 2) return std::nullopt;
  const ir::ValueId bias = add.inputs[0] == y ? add.inputs[1] : add.inputs[0];
  const Tensor* c = constant_tensor(graph, index, bias);
  if (c == nullptr || c->dtype() != a.dtype || !is_row_bias(*c, b->dim(1))) return std::nullopt;

  ir::Node fused;
  fused.name = mm.name;
  fused.op_type = "FusedGemm";
  fused.domain = std::string(ops::kKilnDomain);
  fused.inputs = {mm.inputs[0], mm.inputs[1], bias};
  fused.outputs = add.outputs;
  return Fusion{{n, add_index}, std::move(fused)};
}

Status run(ir::Graph& graph, PassContext& ctx) {
  apply_fusions(graph, ctx, kName, find);
  return Status::ok();
}

}  // namespace
}  // namespace matmul_add_fusion

const PassDef& matmul_add_fusion_pass() {
  static const PassDef def{matmul_add_fusion::kName,
                           "MatMul(A, constant 2-D B) + constant bias -> FusedGemm",
                           matmul_add_fusion::run, PassKind::kFusion};
  return def;
}

}  // namespace kiln::passes
