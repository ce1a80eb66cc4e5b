#include "quant/scale_quantize_fusion.h"

#include <fmt/format.h>

#include <optional>

#include "ir/graph_edit.h"
#include "ops/kiln_fused.h"
#include "quant/requantize_fusion.h"

namespace kiln::quant {
namespace {

using ir::same_dim;

// s scales x per (image, channel): the same rank (2 or more), s [1 or N, C, 1, ...] against x
// [N, C, ...], and x is the product's shape (nothing broadcasts x).
bool scales_per_channel(const ir::TensorDesc& x, const ir::TensorDesc& s, const ir::TensorDesc& y) {
  if (x.dtype != DType::kF32 || s.dtype != DType::kF32 || !x.has_rank() || !s.has_rank() ||
      !y.has_rank() || x.rank() < 2 || s.rank() != x.rank() || y.rank() != x.rank()) {
    return false;
  }
  for (int d = 0; d < x.rank(); ++d) {
    if (!same_dim(x.dim(d), y.dim(d))) return false;
    const ir::Dim& sd = s.dim(d);
    const bool one = sd.is_known() && sd.value == 1;
    if (d == 1 ? !same_dim(sd, x.dim(1)) : !(one || (d == 0 && same_dim(sd, x.dim(0))))) {
      return false;
    }
  }
  return true;
}

// The Mul's operands as (X, S), or nullopt when neither order scales per channel.
std::optional<std::pair<ir::ValueId, ir::ValueId>> mul_operands(const ir::Graph& g,
                                                                const ir::Node& mul) {
  if (!mul.domain.empty() || mul.op_type != "Mul" || mul.inputs.size() != 2 ||
      mul.outputs.size() != 1) {
    return std::nullopt;
  }
  const ir::TensorDesc& y = g.value(mul.outputs[0]).desc;
  for (int first = 0; first < 2; ++first) {
    const ir::ValueId x = mul.inputs[static_cast<size_t>(first)];
    const ir::ValueId s = mul.inputs[static_cast<size_t>(1 - first)];
    if (scales_per_channel(g.value(x).desc, g.value(s).desc, y)) return std::pair{x, s};
  }
  return std::nullopt;
}

}  // namespace

int fuse_scale_quantize(ir::Graph& graph, std::vector<std::string>& log) {
  const ir::GraphIndex index(graph);
  std::vector<bool> dead(graph.nodes.size(), false);
  int fused = 0;
  for (size_t m = 0; m < graph.nodes.size(); ++m) {
    const ir::Node& mul = graph.nodes[m];
    const auto operands = mul_operands(graph, mul);
    if (!operands) continue;
    const std::optional<Uint8Readers> readers = uint8_readers(graph, index, mul.outputs[0]);
    if (!readers || dead[static_cast<size_t>(readers->quantize)]) continue;
    const ir::Node& q = graph.nodes[static_cast<size_t>(readers->quantize)];
    const auto [scale, zero] = *uint8_quantize_params(graph, q);
    ir::Node n;
    n.name = mul.name;
    n.op_type = "ScaleQuantize";
    n.domain = std::string(ops::kKilnDomain);
    n.opset = ops::kKilnOpset;
    n.inputs = {operands->first, operands->second};
    n.outputs = q.outputs;
    n.fused_from = mul.origins();
    for (std::string& o : q.origins()) n.fused_from.push_back(std::move(o));
    n.attrs.set("y_scale", scale);
    n.attrs.set("y_zero_point", zero);
    log.push_back(
        fmt::format("layer '{}' scales and quantizes '{}' in one pass (scale {:.6g}, zero "
                    "point {})",
                    n.name, graph.value(operands->first).name, scale, zero));
    read_residual_as_uint8(graph, readers->residual_of, q.outputs[0], scale, zero);
    dead[static_cast<size_t>(readers->quantize)] = true;
    graph.nodes[m] = std::move(n);
    ++fused;
  }
  if (fused > 0) {
    ir::remove_nodes(graph, dead);
    graph.opset_imports.try_emplace(std::string(ops::kKilnDomain), ops::kKilnOpset);
  }
  return fused;
}

}  // namespace kiln::quant
