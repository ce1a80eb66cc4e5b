#include "runtime/engine.h"

#include "runtime/execution_context.h"

namespace kiln::runtime {

Result<std::shared_ptr<const Engine>> Engine::create(engine::Plan plan) {
  std::shared_ptr<Engine> e(new Engine(std::move(plan)));
  const ir::Graph& g = e->plan_.graph;
  e->classes_ = engine::classify_values(e->plan_);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    // Specs point into the engine's own graph, which never moves again.
    e->specs_.push_back(tactics::make_layer_spec(g, g.nodes[n]));
    const engine::Layer& layer = e->plan_.layers[n];
    if (layer.packed.defined()) e->specs_.back().prepacked = &layer.packed;
    e->specs_.back().fp16_weights = layer.precision == engine::kFp16Precision;
    const tactics::Tactic* t = nullptr;
    if (layer.kind == engine::LayerKind::kRun) {
      t = tactics::find_tactic(layer.tactic);
      if (t == nullptr) {
        return unsupported("layer '{}' uses tactic '{}', which this kiln does not have",
                           g.nodes[n].name, layer.tactic);
      }
      const std::string reason = t->why_not(e->specs_.back());
      if (!reason.empty()) {
        return unsupported("layer '{}': tactic '{}' no longer accepts it: {}", g.nodes[n].name,
                           layer.tactic, reason);
      }
    }
    e->tactics_.push_back(t);
  }
  return std::shared_ptr<const Engine>(std::move(e));
}

ir::ValueId Engine::io_value(std::string_view name) const {
  const ir::ValueId v = graph().find_value(name);
  if (v == ir::kNoValue) return v;
  const ir::Value& val = graph().value(v);
  return val.is_graph_input || val.is_graph_output ? v : ir::kNoValue;
}

Result<std::unique_ptr<ExecutionContext>> Engine::create_execution_context(
    const ContextOptions& options) const {
  return ExecutionContext::create(shared_from_this(), options);
}

}  // namespace kiln::runtime
