#include "runtime/engine.h"

#include "base/half_convert.h"
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
  KILN_RETURN_IF_ERROR(e->pack_fp16_layers());
  return std::shared_ptr<const Engine>(std::move(e));
}

// An FP16 layer's file stores its weights once, as binary16, and no packed copy (half the size):
// its tactic packs them here, once for every execution context, and then the widened float32
// values that only packing read are dropped (the binary16 bits kept for save()), as an FP32
// engine's packed-only constants hold their dims alone. Without this a
// running FP16 ResNet-50 held the float32 weights and each context's packed ones: 342 MB
// resident against 192 for FP32.
Status Engine::pack_fp16_layers() {
  bool packed = false;
  for (size_t n = 0; n < plan_.layers.size(); ++n) {
    engine::Layer& layer = plan_.layers[n];
    const tactics::Tactic* t = tactics_[n];
    if (layer.precision != engine::kFp16Precision || layer.packed.defined() || t == nullptr ||
        t->packed_inputs().empty()) {
      continue;
    }
    KILN_ASSIGN_OR_RETURN(layer.packed, t->prepack(specs_[n]));
    if (!layer.packed.defined()) continue;
    layer.packed_at_load = true;
    specs_[n].prepacked = &layer.packed;
    packed = true;
  }
  if (packed) drop_packed_fp16_values();
  return Status::ok();
}

void Engine::drop_packed_fp16_values() {
  ir::Graph& g = plan_.graph;
  const std::vector<bool> half = engine::fp16_stored_values(plan_);
  const std::vector<bool> packed_only = engine::packed_only_values(plan_, true);
  plan_.fp16_bits.resize(g.values.size());
  for (size_t v = 0; v < g.values.size(); ++v) {
    std::optional<Tensor>& init = g.values[v].initializer;
    if (!half[v] || !packed_only[v] || init->raw_data() == nullptr) continue;
    if (!plan_.fp16_bits[v].defined()) {  // built in this process: no file holds the bits
      plan_.fp16_bits[v] = narrow_to_half(*init);
    }
    *init = Tensor::borrow(init->dtype(), init->dims(), nullptr, nullptr);
  }
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
