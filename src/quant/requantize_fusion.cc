#include "quant/requantize_fusion.h"

#include <fmt/format.h>

#include <optional>

#include "ir/graph_edit.h"
#include "ops/kiln_quant.h"
#include "quant/value_sign.h"

namespace kiln::quant {
namespace {

constexpr size_t kResidualInput = 4;

bool is_int8_layer(const ir::Node& n) {
  return n.domain == "kiln" && (n.op_type == "QConv" || n.op_type == "QGemm");
}

// The INT8 layers reading `y` as their residual, when that is all that reads it (and it is not a
// graph output); empty otherwise.
std::vector<int> residual_only_readers(const ir::Graph& g, const ir::GraphIndex& index,
                                       ir::ValueId y) {
  std::vector<int> readers;
  if (g.value(y).is_graph_output) return readers;
  for (const ir::Use& u : index.uses(y)) {
    const ir::Node& reader = g.nodes[static_cast<size_t>(u.node)];
    if (!is_int8_layer(reader) || static_cast<size_t>(u.input) != kResidualInput) return {};
    readers.push_back(u.node);
  }
  return readers;
}

// Layer p writes `yq`, uint8 with that scale and zero point, instead of its float output.
void write_uint8(ir::Node& p, ir::ValueId yq, float scale, int64_t zero) {
  p.attrs.set("output_type", ops::kQuantOutputUint8);
  p.attrs.set("y_scale", scale);
  p.attrs.set("y_zero_point", zero);
  p.outputs[0] = yq;
}

std::string residual_note(size_t readers) {
  return readers == 0 ? "" : fmt::format(", read as the residual of {} layer(s)", readers);
}

// The residual-only case: a new uint8 value, encoded from the range table.
bool fuse_residual_only(ir::Graph& graph, const ir::GraphIndex& index, const RangeTable& ranges,
                        size_t node, std::vector<std::string>& log) {
  const ir::ValueId y = graph.nodes[node].outputs[0];
  const std::vector<int> readers = residual_only_readers(graph, index, y);
  const ir::Value& v = graph.value(y);
  const TensorRange* r = readers.empty() || v.desc.dtype != DType::kF32
                             ? nullptr
                             : ranges.find(v.name, v.is_graph_input);
  if (r == nullptr) return false;
  const Uint8Encoding e = value_encoding(graph, index, y, *r);
  const std::string name = v.name;
  const ir::ValueId yq = add_uint8_value(graph, y);
  ir::Node& p = graph.nodes[node];
  write_uint8(p, yq, e.scale, e.zero_point);
  read_residual_as_uint8(graph, readers, yq, e.scale, e.zero_point);
  log.push_back(fmt::format("layer '{}' writes '{}' as uint8 (scale {:.6g}, zero point {}){}",
                            p.name, name, e.scale, e.zero_point, residual_note(readers.size())));
  return true;
}

}  // namespace

std::optional<Uint8Readers> uint8_readers(const ir::Graph& g, const ir::GraphIndex& index,
                                          ir::ValueId y) {
  if (g.value(y).is_graph_output) return std::nullopt;
  Uint8Readers r;
  for (const ir::Use& u : index.uses(y)) {
    const ir::Node& reader = g.nodes[static_cast<size_t>(u.node)];
    if (u.input == 0 && r.quantize < 0 && uint8_quantize_params(g, reader)) {
      r.quantize = u.node;
    } else if (is_int8_layer(reader) && static_cast<size_t>(u.input) == kResidualInput) {
      r.residual_of.push_back(u.node);
    } else {
      return std::nullopt;
    }
  }
  if (r.quantize < 0) return std::nullopt;
  return r;
}

void read_residual_as_uint8(ir::Graph& g, const std::vector<int>& readers, ir::ValueId yq,
                            float scale, int64_t zero) {
  for (int r : readers) {
    ir::Node& reader = g.nodes[static_cast<size_t>(r)];
    reader.inputs[kResidualInput] = yq;
    reader.attrs.set("z_scale", scale);
    reader.attrs.set("z_zero_point", zero);
  }
}

std::optional<std::pair<float, int64_t>> uint8_quantize_params(const ir::Graph& g,
                                                               const ir::Node& n) {
  if (!n.domain.empty() || n.op_type != "QuantizeLinear" || n.inputs.size() != 3) return {};
  const Tensor* scale = g.value(n.inputs[1]).constant();
  const Tensor* zero = g.value(n.inputs[2]).constant();
  if (!scale || !zero || scale->numel() != 1 || zero->numel() != 1) return {};
  if (scale->dtype() != DType::kF32 || zero->dtype() != DType::kU8) return {};
  return std::pair{scale->data<float>()[0], zero->value_as_int(0)};
}

int fuse_requantize(ir::Graph& graph, const RangeTable& ranges, std::vector<std::string>& log) {
  const ir::GraphIndex index(graph);
  std::vector<bool> dead(graph.nodes.size(), false);
  int fused = 0;
  for (ir::Node& p : graph.nodes) {
    if (!is_int8_layer(p) ||
        p.attrs.get_int("output_type", ops::kQuantOutputFloat) != ops::kQuantOutputFloat) {
      continue;
    }
    const ir::ValueId y = p.outputs[0];
    const std::optional<Uint8Readers> readers = uint8_readers(graph, index, y);
    if (!readers) {
      const auto node = static_cast<size_t>(&p - graph.nodes.data());
      fused += fuse_residual_only(graph, index, ranges, node, log) ? 1 : 0;
      continue;
    }
    const ir::Node& q = graph.nodes[static_cast<size_t>(readers->quantize)];
    const auto [scale, zero] = *uint8_quantize_params(graph, q);
    const ir::ValueId yq = q.outputs[0];
    write_uint8(p, yq, scale, zero);
    read_residual_as_uint8(graph, readers->residual_of, yq, scale, zero);
    dead[static_cast<size_t>(readers->quantize)] = true;
    log.push_back(fmt::format("layer '{}' writes '{}' as uint8 (scale {:.6g}, zero point {}){}",
                              p.name, graph.value(yq).name, scale, zero,
                              residual_note(readers->residual_of.size())));
    ++fused;
  }
  ir::remove_nodes(graph, dead);
  return fused;
}

}  // namespace kiln::quant
