#include "engine/fp16_weights.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/half_convert.h"
#include "ir/graph_edit.h"
#include "ops/kiln_fused.h"
#include "quant/layer_precision.h"

namespace kiln::engine {
namespace {

constexpr std::string_view kFp16Note =
    "fp16: weights stored fp16, computed in fp32: this CPU has no FP16 arithmetic";

// The --layerPrecisions rule for the layer; null when none applies or the rules are ignored.
const quant::LayerPrecisionRule* fp16_rule_for(const ir::Node& node, const BuildOptions& o) {
  if (o.precision_constraints == quant::PrecisionConstraints::kNone) return nullptr;
  return quant::find_layer_rule(o.layer_precisions, node.origins());
}

// Why the node's weights cannot be FP16, or "".
std::string fp16_why_not(const ir::Graph& graph, const ir::GraphIndex& index, int n,
                         const std::set<int>& fp32_nodes) {
  const ir::Node& node = graph.nodes[static_cast<size_t>(n)];
  if (node.inputs.size() < 2 || node.inputs[1] == ir::kNoValue) return "it has no weights";
  const ir::Value& w = graph.value(node.inputs[1]);
  const Tensor* t = w.constant();
  if (t == nullptr) return fmt::format("its weights '{}' are not a constant", w.name);
  if (t->dtype() != DType::kF32) {
    return fmt::format("its weights '{}' are {}, not float32", w.name, dtype_name(t->dtype()));
  }
  for (const ir::Use& u : index.uses(node.inputs[1])) {
    const ir::Node& other = graph.nodes[static_cast<size_t>(u.node)];
    if (u.input != 1 || !is_fp16_candidate(other) || fp32_nodes.count(u.node) > 0) {
      return fmt::format("its weights '{}' are shared with layer '{}', which stays fp32", w.name,
                         other.name);
    }
  }
  return "";
}

// The same tensor with every element rounded to the nearest binary16 value (ties to even; beyond
// 65504 to +-inf, as the hardware conversion).
Tensor round_to_half(const Tensor& t) {
  Tensor out(DType::kF32, t.dims());
  const float* src = t.data<float>();
  float* dst = out.data<float>();
  constexpr int64_t kChunk = 4096;  // the binary16 bits of a chunk stay in L1
  uint16_t bits[kChunk];
  for (int64_t i = 0, n = t.numel(); i < n; i += kChunk) {
    const int64_t c = std::min(kChunk, n - i);
    floats_to_halves(src + i, bits, c);
    halves_to_floats(bits, dst + i, c);
  }
  return out;
}

}  // namespace

bool is_fp16_candidate(const ir::Node& node) {
  if (node.domain.empty()) {
    return node.op_type == "Conv" || node.op_type == "Gemm" || node.op_type == "MatMul";
  }
  return node.domain == ops::kKilnDomain &&
         (node.op_type == "FusedConv" || node.op_type == "FusedGemm");
}

Status lower_fp16(ir::Graph& graph, const BuildOptions& options,
                  std::map<std::string, std::string>& notes, std::set<std::string>& fp16_layers,
                  std::vector<std::string>& log) {
  const bool obey = options.precision_constraints == quant::PrecisionConstraints::kObey;
  // First the layers --layerPrecisions keeps in fp32: their weights must stay exact even when
  // another layer shares them.
  std::set<int> fp32_nodes;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const ir::Node& node = graph.nodes[n];
    const quant::LayerPrecisionRule* rule = fp16_rule_for(node, options);
    if (is_fp16_candidate(node) && rule != nullptr && rule->precision == "fp32") {
      fp32_nodes.insert(static_cast<int>(n));
      notes[node.name] = fmt::format("fp32: --layerPrecisions ('{}')", rule->pattern);
    }
  }
  const ir::GraphIndex index(graph);
  std::set<ir::ValueId> rounded;
  int count = 0, kept = 0;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const ir::Node& node = graph.nodes[n];
    if (!is_fp16_candidate(node) || fp32_nodes.count(static_cast<int>(n)) > 0) continue;
    const std::string why = fp16_why_not(graph, index, static_cast<int>(n), fp32_nodes);
    if (!why.empty()) {
      ++kept;
      notes[node.name] = "fp32: " + why;
      const quant::LayerPrecisionRule* rule = fp16_rule_for(node, options);
      if (rule == nullptr || rule->precision != "fp16") continue;
      const std::string msg =
          fmt::format("layer '{}' ({}): --layerPrecisions asks for fp16 ('{}'), but {}", node.name,
                      node.op_type, rule->pattern, why);
      if (obey) return unsupported("{} (--precisionConstraints=obey)", msg);
      log.push_back("warning: " + msg + "; it runs in fp32");
      continue;
    }
    const ir::ValueId w = node.inputs[1];
    if (rounded.insert(w).second) {
      ir::Value& value = graph.value(w);
      value.initializer = round_to_half(*value.initializer);
    }
    fp16_layers.insert(node.name);
    // Under --best, keep why the INT8 step left the layer in float.
    std::string& note = notes[node.name];
    note = note.rfind("fp32: ", 0) == 0
               ? fmt::format("{} (not int8: {})", kFp16Note, note.substr(6))
               : std::string(kFp16Note);
    ++count;
  }
  log.push_back(
      fmt::format("fp16: {} layers with fp16 weights ({} weight tensors), {} left in fp32", count,
                  rounded.size(), kept + fp32_nodes.size()));
  return Status::ok();
}

}  // namespace kiln::engine
