#include "passes/patch_embedding.h"

#include <algorithm>
#include <optional>

#include "kernels/ref/movement.h"
#include "ops/kiln_fused.h"
#include "passes/fusion_util.h"

namespace kiln::passes {
namespace patch_embedding {
namespace {

constexpr std::string_view kName = "patch_embedding";

struct Chain {
  int conv = -1, reshape = -1, transpose = -1;
  int64_t kh = 0, kw = 0;
};

bool all_equal(const std::vector<int64_t>& v, int64_t x) {
  return std::all_of(v.begin(), v.end(), [x](int64_t e) { return e == x; });
}

// The Conv's window when it cuts an h x w image into non-overlapping patches covering it exactly.
std::optional<std::pair<int64_t, int64_t>> patch_window(const ir::Node& conv, int64_t h, int64_t w,
                                                        const Tensor& weights) {
  const ir::Attributes& a = conv.attrs;
  const std::string pad = a.get_string("auto_pad", "NOTSET");
  if (a.get_int("group", 1) != 1 || !all_equal(a.get_ints("dilations"), 1) ||
      !all_equal(a.get_ints("pads"), 0) || (pad != "NOTSET" && pad != "VALID")) {
    return std::nullopt;
  }
  const int64_t kh = weights.dim(2), kw = weights.dim(3);
  const std::vector<int64_t> k = a.get_ints("kernel_shape");
  const std::vector<int64_t> s = a.get_ints("strides");
  if ((!k.empty() && k != std::vector<int64_t>{kh, kw}) || s != std::vector<int64_t>{kh, kw}) {
    return std::nullopt;
  }
  if (h % kh != 0 || w % kw != 0) return std::nullopt;
  return std::pair{kh, kw};
}

// A Reshape of a [N, M, OH, OW] value to [N, M, OH * OW]: its pixels on one axis (torch's
// flatten(2); ONNX's Flatten always makes 2-D).
bool flattens_pixels(const ir::Graph& g, const ir::Node& n, const ir::TensorDesc& y) {
  const ir::TensorDesc& out = g.value(n.outputs[0]).desc;
  if (!is_onnx_op(n, "Reshape") || !out.has_rank() || out.rank() != 3) return false;
  return same_dim(out.dim(0), y.dim(0)) && same_dim(out.dim(1), y.dim(1)) &&
         out.dim(2).is_known() && out.dim(2).value == y.dim(2).value * y.dim(3).value;
}

std::optional<Chain> find(const ir::Graph& g, const ir::GraphIndex& index, int n) {
  const ir::Node& conv = g.nodes[static_cast<size_t>(n)];
  if (!is_onnx_op(conv, "Conv") || conv.inputs.size() < 2 || conv.outputs.size() != 1) {
    return std::nullopt;
  }
  const ir::TensorDesc& xd = g.value(conv.inputs[0]).desc;
  const ir::TensorDesc& yd = g.value(conv.outputs[0]).desc;
  const Tensor* w = constant_tensor(g, index, conv.inputs[1]);
  const bool has_b = conv.inputs.size() > 2 && conv.inputs[2] != ir::kNoValue;
  if (xd.dtype != DType::kF32 || !xd.has_rank() || xd.rank() != 4 || w == nullptr ||
      w->dtype() != DType::kF32 || w->rank() != 4 || !yd.has_rank() || yd.rank() != 4 ||
      (has_b && constant_tensor(g, index, conv.inputs[2]) == nullptr)) {
    return std::nullopt;
  }
  for (int k = 1; k < 4; ++k) {
    if (!xd.dim(k).is_known() || !yd.dim(k).is_known()) return std::nullopt;
  }
  const auto window = patch_window(conv, xd.dim(2).value, xd.dim(3).value, *w);
  if (!window || !index.has_single_reader(conv.outputs[0])) return std::nullopt;
  const int reshape = index.uses(conv.outputs[0])[0].node;
  const ir::Node& r = g.nodes[static_cast<size_t>(reshape)];
  if (!flattens_pixels(g, r, yd) || !index.has_single_reader(r.outputs[0])) return std::nullopt;
  const int transpose = index.uses(r.outputs[0])[0].node;
  const ir::Node& t = g.nodes[static_cast<size_t>(transpose)];
  if (!is_onnx_op(t, "Transpose") || t.attrs.get_ints("perm") != std::vector<int64_t>{0, 2, 1}) {
    return std::nullopt;
  }
  return Chain{n, reshape, transpose, window->first, window->second};
}

// W [M, C, kh, kw] as the GEMM's B [C kh kw, M].
Tensor transposed_weights(const Tensor& w) {
  const int64_t m = w.dim(0), k = w.numel() / m;
  Tensor out(DType::kF32, {k, m});
  const int64_t perm[] = {1, 0};
  kernels::ref::transpose(w.raw_data(), sizeof(float), {m, k}, perm, out.raw_data());
  return out;
}

// Replaces the chain with Patches and FusedGemm in the Transpose's place (X and the constants are
// available there; the Transpose's output keeps its name).
void rewrite(ir::Graph& g, const ir::GraphIndex& index, const Chain& c, PassContext& ctx) {
  const ir::Node conv = g.nodes[static_cast<size_t>(c.conv)];
  const ir::Node reshape = g.nodes[static_cast<size_t>(c.reshape)];
  const ir::Node transpose = g.nodes[static_cast<size_t>(c.transpose)];
  // Copies: adding values below may move the descs.
  const ir::Dim n = g.value(transpose.outputs[0]).desc.dim(0);
  const ir::Dim pixels = g.value(transpose.outputs[0]).desc.dim(1);
  const int64_t depth = g.value(conv.inputs[0]).desc.dim(1).value * c.kh * c.kw;
  const Tensor weights = transposed_weights(*constant_tensor(g, index, conv.inputs[1]));
  const std::vector<std::string> origins = {conv.name, reshape.name, transpose.name};

  ir::Node patches;
  patches.name = conv.name + "/patches";
  patches.op_type = std::string(ops::kPatches);
  patches.domain = std::string(ops::kKilnDomain);
  patches.opset = ops::kKilnOpset;
  patches.attrs.set("kernel_shape", std::vector<int64_t>{c.kh, c.kw});
  patches.inputs = {conv.inputs[0]};
  patches.outputs = {
      g.add_value(ir::unique_value_name(g, conv.name + "_patches"),
                  ir::TensorDesc::of(DType::kF32, {n, pixels, ir::Dim::known(depth)}))};
  patches.fused_from = {conv.name};

  ir::Node gemm;
  gemm.name = conv.name;
  gemm.op_type = "FusedGemm";
  gemm.domain = std::string(ops::kKilnDomain);
  gemm.opset = ops::kKilnOpset;
  gemm.inputs = {patches.outputs[0], ir::add_constant(g, conv.name + "_B", weights)};
  if (conv.inputs.size() > 2 && conv.inputs[2] != ir::kNoValue) {
    gemm.inputs.push_back(conv.inputs[2]);
  }
  gemm.outputs = transpose.outputs;
  gemm.fused_from = origins;
  ctx.log.fused(kName, origins, "kiln.Patches + kiln.FusedGemm", gemm.name);

  std::vector<bool> dead(g.nodes.size(), false);
  dead[static_cast<size_t>(c.conv)] = dead[static_cast<size_t>(c.reshape)] = true;
  g.nodes[static_cast<size_t>(c.transpose)] = std::move(gemm);
  g.nodes.insert(g.nodes.begin() + c.transpose, std::move(patches));
  dead.insert(dead.begin() + c.transpose, false);
  ir::remove_nodes(g, dead);
  g.opset_imports.try_emplace(std::string(ops::kKilnDomain), ops::kKilnOpset);
}

Status run(ir::Graph& graph, PassContext& ctx) {
  if (ctx.explicit_scales != nullptr && !ctx.explicit_scales->empty()) return Status::ok();
  std::optional<ir::GraphIndex> index;  // rebuilt after a rewrite changed the graph
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (!is_onnx_op(graph.nodes[n], "Conv")) continue;
    if (!index) index.emplace(graph);
    if (const std::optional<Chain> c = find(graph, *index, static_cast<int>(n))) {
      rewrite(graph, *index, *c, ctx);
      index.reset();
    }
  }
  return Status::ok();
}

}  // namespace
}  // namespace patch_embedding

const PassDef& patch_embedding_pass() {
  static const PassDef def{patch_embedding::kName,
                           "Conv (kernel = stride) -> Reshape -> Transpose(0, 2, 1) -> "
                           "kiln.Patches -> kiln.FusedGemm",
                           patch_embedding::run, PassKind::kFusion};
  return def;
}

}  // namespace kiln::passes
