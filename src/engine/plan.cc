#include "engine/plan.h"

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
