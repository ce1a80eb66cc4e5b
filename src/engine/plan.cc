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

int find_profile(const Plan& plan, const std::vector<Dims>& input_dims) {
  for (size_t p = 0; p < plan.profiles.size(); ++p) {
    const Profile& prof = plan.profiles[p];
    bool fits = prof.inputs.size() == input_dims.size();
    for (size_t i = 0; fits && i < input_dims.size(); ++i) {
      const InputRange& r = prof.inputs[i];
      const Dims& d = input_dims[i];
      fits = d.size() == r.min.size();
      for (size_t k = 0; fits && k < d.size(); ++k) fits = r.min[k] <= d[k] && d[k] <= r.max[k];
    }
    if (fits) return static_cast<int>(p);
  }
  return -1;
}

}  // namespace kiln::engine
