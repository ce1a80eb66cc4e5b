#include "engine/plan.h"

#include <algorithm>

namespace kiln::engine {

std::vector<ValueClass> classify_values(const Plan& plan) {
  const ir::Graph& g = plan.graph;
  std::vector<ValueClass> out(g.values.size(), ValueClass::kUnused);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const ValueClass cls =
        plan.layers[n].kind == LayerKind::kShape ? ValueClass::kShape : ValueClass::kArena;
    for (ir::ValueId v : g.nodes[n].outputs) {
      if (v != ir::kNoValue) out[static_cast<size_t>(v)] = cls;
    }
    for (ir::ValueId v : g.nodes[n].inputs) {
      if (v != ir::kNoValue && g.value(v).constant()) {
        out[static_cast<size_t>(v)] = ValueClass::kConstant;
      }
    }
  }
  for (ir::ValueId v : g.inputs) out[static_cast<size_t>(v)] = ValueClass::kInput;
  for (ir::ValueId v : g.outputs) {
    if (out[static_cast<size_t>(v)] == ValueClass::kArena)
      out[static_cast<size_t>(v)] = ValueClass::kOutput;
  }
  return out;
}

namespace {

// Whether layer n's packed weights stand for its input i.
bool input_packed(const Plan& plan, size_t n, size_t i, bool with_load_packing) {
  const Layer& layer = plan.layers[n];
  if (layer.kind != LayerKind::kRun || !layer.packed.defined()) return false;
  if (layer.packed_at_load && !with_load_packing) return false;
  const tactics::Tactic* t = tactics::find_tactic(layer.tactic);
  if (t == nullptr) return false;
  const std::span<const size_t> packed = t->packed_inputs();
  return std::find(packed.begin(), packed.end(), i) != packed.end();
}

}  // namespace

std::vector<bool> fp16_stored_values(const Plan& plan) {
  const ir::Graph& g = plan.graph;
  std::vector<bool> out(g.values.size(), false);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const std::vector<ir::ValueId>& in = g.nodes[n].inputs;
    if (plan.layers[n].precision != kFp16Precision || in.size() < 2 || in[1] == ir::kNoValue) {
      continue;
    }
    const ir::Value& w = g.value(in[1]);
    out[static_cast<size_t>(in[1])] =
        w.initializer && w.initializer->dtype() == DType::kF32 && !w.is_graph_input;
  }
  return out;
}

std::vector<bool> packed_only_values(const Plan& plan, bool with_load_packing) {
  const ir::Graph& g = plan.graph;
  std::vector<bool> out(g.values.size(), false), read(g.values.size(), false);
  std::vector<bool> other_reader(g.values.size(), false);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const std::vector<ir::ValueId>& inputs = g.nodes[n].inputs;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i] == ir::kNoValue) continue;
      const auto v = static_cast<size_t>(inputs[i]);
      read[v] = true;
      if (!input_packed(plan, n, i, with_load_packing)) other_reader[v] = true;
    }
  }
  for (size_t v = 0; v < g.values.size(); ++v) {
    const ir::Value& val = g.values[v];
    out[v] = read[v] && !other_reader[v] && val.initializer && !val.is_graph_input &&
             !val.is_graph_output;
  }
  return out;
}

bool range_contains(const InputRange& range, std::span<const int64_t> dims) {
  if (dims.size() != range.min.size()) return false;
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] < range.min[k] || dims[k] > range.max[k]) return false;
  }
  return true;
}

bool profile_contains(const Profile& profile, const std::vector<Dims>& input_dims) {
  if (profile.inputs.size() != input_dims.size()) return false;
  for (size_t i = 0; i < input_dims.size(); ++i) {
    if (!range_contains(profile.inputs[i], input_dims[i])) return false;
  }
  return true;
}

int find_profile(const Plan& plan, const std::vector<Dims>& input_dims) {
  for (size_t p = 0; p < plan.profiles.size(); ++p) {
    if (profile_contains(plan.profiles[p], input_dims)) return static_cast<int>(p);
  }
  return -1;
}

}  // namespace kiln::engine
