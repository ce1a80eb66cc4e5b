#pragma once
// A loaded (or freshly built) engine, ready to run: the plan plus, per layer, the resolved tactic
// and the spec its kernels are instantiated from. Immutable and shared by every ExecutionContext
// created from it; contexts may run on different threads at the same time.

#include <memory>
#include <string_view>
#include <vector>

#include "engine/plan.h"
#include "tactics/tactic.h"

namespace kiln::runtime {

class ExecutionContext;

struct ContextOptions {
  // Threads that split each layer's work, the caller included; the context creates its pool once.
  // 1 runs everything on the calling thread; 0 means one per core this process may use.
  int threads = 1;
};

class Engine : public std::enable_shared_from_this<Engine> {
 public:
  // Fails when a layer's tactic is unknown to this kiln or no longer accepts the layer.
  static Result<std::shared_ptr<const Engine>> create(engine::Plan plan);

  const engine::Plan& plan() const { return plan_; }
  const ir::Graph& graph() const { return plan_.graph; }
  const std::vector<engine::ValueClass>& value_classes() const { return classes_; }
  // nullptr for shape layers.
  const tactics::Tactic* tactic(size_t layer) const { return tactics_[layer]; }
  const tactics::LayerSpec& spec(size_t layer) const { return specs_[layer]; }

  // kNoValue when `name` is neither a graph input nor a graph output.
  ir::ValueId io_value(std::string_view name) const;

  Result<std::unique_ptr<ExecutionContext>> create_execution_context(
      const ContextOptions& options = {}) const;

 private:
  explicit Engine(engine::Plan plan) : plan_(std::move(plan)) {}
  Status pack_fp16_layers();
  void drop_packed_fp16_values();

  engine::Plan plan_;
  std::vector<engine::ValueClass> classes_;
  std::vector<const tactics::Tactic*> tactics_;
  std::vector<tactics::LayerSpec> specs_;
};

}  // namespace kiln::runtime
