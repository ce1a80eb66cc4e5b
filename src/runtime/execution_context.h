#pragma once
// One caller's state for running an engine: input shapes, bound buffers, the activation arena and
// one kernel object per layer. Create one per thread that runs the engine; contexts on one engine
// share weights and nothing mutable.
//
// Usage, as with TensorRT:
//   ctx->set_input_shape("input", {4, 3, 224, 224});      // inputs with dynamic dims
//   ctx->set_tensor_address("input", in_ptr);             // every input and output
//   ctx->set_tensor_address("output", out_ptr);           //   (outputs may be left to the context)
//   ctx->execute();                                       // the hot path: allocates nothing
// Changing a shape makes the next execute() re-derive shapes, pick the profile that contains
// them and reshape the kernels first; rebinding an address only updates pointers.

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "engine/shape_resolver.h"
#include "runtime/engine.h"
#include "runtime/input_check.h"

namespace kiln::runtime {

// Called after each run layer when set (per-layer profiling, debugging); not for the hot path of
// production runs.
using LayerCallback = std::function<void(size_t layer)>;

class ExecutionContext {
 public:
  static Result<std::unique_ptr<ExecutionContext>> create(std::shared_ptr<const Engine> engine,
                                                          const ContextOptions& options = {});
  ~ExecutionContext();

  const Engine& engine() const { return *engine_; }

  // Dims of an input; static inputs need not be set. Refused, naming the input, when no profile
  // allows the dims.
  Status set_input_shape(std::string_view input, std::span<const int64_t> dims);
  // The buffer of an input or output. Inputs are only read. Unbound outputs live in buffers the
  // context owns (see tensor_address).
  Status set_tensor_address(std::string_view name, const void* data);
  // Resolves shapes if needed; the current dims of any input or output.
  Result<Dims> tensor_shape(std::string_view name);
  // The buffer an output is written to (after shapes are resolved).
  Result<const void*> tensor_address(std::string_view name);

  // Runs the engine on the bound buffers.
  Status execute();

  // Sets shapes and binds `inputs` (by name; inputs with a default may be left out), then does
  // now what the first execute() for these shapes would: resolves shapes, allocates the arena and
  // reshapes the kernels (oneDNN's make their primitives there), so that a caller can time that
  // one-time work apart from the runs.
  Status bind_inputs(const NamedTensors& inputs);
  // Convenience for tools and tests: bind_inputs(), executes, and returns copies of the outputs in
  // graph order.
  Result<std::vector<Tensor>> run(const NamedTensors& inputs);

  int active_profile() const { return profile_; }
  int threads() const { return pool_ ? pool_->size() : 1; }
  size_t arena_bytes() const { return arena_bytes_; }
  // How often the arena had to be re-planned because shapes did not fit the profile's plan.
  int replans() const { return replans_; }
  void set_layer_callback(LayerCallback cb) { layer_callback_ = std::move(cb); }
  // Any value's dims and memory as of now, for debugging and calibration tools: a layer's outputs
  // are valid inside the layer callback for that layer (later layers may reuse their memory), the
  // engine's inputs and outputs after execute(). Constants are not in the arena: refused.
  Result<TensorView> value_view(ir::ValueId v) const;

 private:
  struct RunLayer {
    size_t node;
    std::unique_ptr<tactics::LayerKernel> kernel;
    std::vector<TensorView> inputs, outputs;
    bool own_threads = false;  // Tactic::runs_own_threads
  };

  explicit ExecutionContext(std::shared_ptr<const Engine> engine);
  Status prepare();
  Status run_layers(size_t begin, size_t end);
  Status check_bindings() const;
  void place_values(const engine::MemoryLayout& layout);
  Status allocate_arena(size_t bytes);
  void bind_views();
  Status choose_profile();
  std::string describe_profiles(size_t input) const;
  Result<ir::ValueId> io(std::string_view name) const;

  std::shared_ptr<const Engine> engine_;
  std::unique_ptr<parallel::ThreadPool> pool_;  // null when single-threaded
  std::vector<RunLayer> layers_;
  std::vector<std::optional<Dims>> input_dims_;  // per graph input
  std::vector<const void*> user_address_;        // per value (inputs and outputs)
  std::vector<void*> address_;                   // per value, after prepare()
  engine::ResolvedShapes shapes_;
  std::vector<std::vector<std::byte>> owned_outputs_;  // per graph output not bound by the user
  std::byte* arena_ = nullptr;
  size_t arena_bytes_ = 0;
  int profile_ = -1;
  int replans_ = 0;
  bool shapes_dirty_ = true;
  bool bindings_dirty_ = true;
  LayerCallback layer_callback_;
};

}  // namespace kiln::runtime
