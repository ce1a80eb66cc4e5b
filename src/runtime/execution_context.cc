#include "runtime/execution_context.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

#include "engine/memory_layout.h"

namespace kiln::runtime {
namespace {

constexpr size_t kArenaAlignment = 64;

}  // namespace

ExecutionContext::ExecutionContext(std::shared_ptr<const Engine> engine)
    : engine_(std::move(engine)) {}

ExecutionContext::~ExecutionContext() { std::free(arena_); }

Result<std::unique_ptr<ExecutionContext>> ExecutionContext::create(
    std::shared_ptr<const Engine> engine, const ContextOptions& options) {
  if (options.threads < 0) {
    return invalid_argument("an execution context needs threads >= 0 (0: one per core), got {}",
                            options.threads);
  }
  std::unique_ptr<ExecutionContext> ctx(new ExecutionContext(engine));
  const int threads = parallel::thread_count(options.threads);
  if (threads > 1) ctx->pool_ = std::make_unique<parallel::ThreadPool>(threads);
  const ir::Graph& g = engine->graph();
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const tactics::Tactic* t = engine->tactic(n);
    if (t == nullptr) continue;
    Result<std::unique_ptr<tactics::LayerKernel>> kernel = t->instantiate(engine->spec(n));
    if (!kernel.is_ok()) {
      return kernel.status().with_context(
          fmt::format("layer '{}' (tactic {})", g.nodes[n].name, t->name()));
    }
    (*kernel)->set_thread_pool(ctx->pool_.get());
    ctx->layers_.push_back(RunLayer{n, std::move(kernel).value(), {}, {}, t->runs_own_threads()});
  }
  for (ir::ValueId v : g.inputs) {
    const ir::TensorDesc& d = g.value(v).desc;
    ctx->input_dims_.push_back(d.is_static() ? std::optional<Dims>(d.static_dims()) : std::nullopt);
  }
  ctx->user_address_.assign(g.values.size(), nullptr);
  ctx->address_.assign(g.values.size(), nullptr);
  return ctx;
}

Result<TensorView> ExecutionContext::value_view(ir::ValueId v) const {
  const ir::Graph& g = engine_->graph();
  if (v < 0 || static_cast<size_t>(v) >= g.values.size()) {
    return invalid_argument("value id {} is not in the engine's graph", v);
  }
  const auto i = static_cast<size_t>(v);
  if (shapes_dirty_ || i >= address_.size() || address_[i] == nullptr || !shapes_.dims[i]) {
    return invalid_argument("value '{}' has no buffer yet: execute the context first",
                            g.value(v).name);
  }
  return TensorView{g.value(v).desc.dtype, *shapes_.dims[i], address_[i]};
}

Result<ir::ValueId> ExecutionContext::io(std::string_view name) const {
  const ir::ValueId v = engine_->io_value(name);
  if (v == ir::kNoValue) {
    std::vector<std::string> names;
    for (ir::ValueId i : engine_->graph().inputs) names.push_back(engine_->graph().value(i).name);
    for (ir::ValueId o : engine_->graph().outputs) names.push_back(engine_->graph().value(o).name);
    return invalid_argument("'{}' is not an input or output of the engine (it has: {})", name,
                            fmt::join(names, ", "));
  }
  return v;
}

std::string ExecutionContext::describe_profiles(size_t input) const {
  std::string out;
  const auto& profiles = engine_->plan().profiles;
  for (size_t p = 0; p < profiles.size(); ++p) {
    const engine::InputRange& r = profiles[p].inputs[input];
    out += fmt::format("{}profile {}: min {}, max {}", p ? "; " : "", p, dims_to_string(r.min),
                       dims_to_string(r.max));
  }
  return out;
}

Status ExecutionContext::set_input_shape(std::string_view input, std::span<const int64_t> dims) {
  KILN_ASSIGN_OR_RETURN(const ir::ValueId v, io(input));
  const ir::Graph& g = engine_->graph();
  const auto it = std::find(g.inputs.begin(), g.inputs.end(), v);
  if (it == g.inputs.end()) return invalid_argument("'{}' is an output, not an input", input);
  const auto i = static_cast<size_t>(it - g.inputs.begin());
  bool allowed = false;
  for (const engine::Profile& p : engine_->plan().profiles) {
    allowed |= engine::range_contains(p.inputs[i], dims);
  }
  if (!allowed) {
    return invalid_argument("input '{}': shape {} is outside every optimization profile ({})",
                            input, dims_to_string(dims), describe_profiles(i));
  }
  Dims d(dims.begin(), dims.end());
  if (input_dims_[i] != d) {
    input_dims_[i] = std::move(d);
    shapes_dirty_ = true;
  }
  return Status::ok();
}

Status ExecutionContext::set_tensor_address(std::string_view name, const void* data) {
  KILN_ASSIGN_OR_RETURN(const ir::ValueId v, io(name));
  user_address_[static_cast<size_t>(v)] = data;
  bindings_dirty_ = true;
  return Status::ok();
}

Status ExecutionContext::choose_profile() {
  const ir::Graph& g = engine_->graph();
  std::vector<Dims> dims;
  for (size_t i = 0; i < input_dims_.size(); ++i) {
    if (!input_dims_[i]) {
      return invalid_argument("input '{}' is {}: set its shape before executing ({})",
                              g.value(g.inputs[i]).name, g.value(g.inputs[i]).desc.to_string(),
                              describe_profiles(i));
    }
    dims.push_back(*input_dims_[i]);
  }
  // Keep the current profile when it still fits: switching costs a re-plan.
  const auto& profiles = engine_->plan().profiles;
  if (profile_ >= 0 && engine::profile_contains(profiles[static_cast<size_t>(profile_)], dims)) {
    return Status::ok();
  }
  profile_ = engine::find_profile(engine_->plan(), dims);
  if (profile_ < 0) {
    std::vector<std::string> shapes;
    for (size_t i = 0; i < dims.size(); ++i) {
      shapes.push_back(fmt::format("{} {}", g.value(g.inputs[i]).name, dims_to_string(dims[i])));
    }
    return invalid_argument(
        "no optimization profile contains all of the input shapes together "
        "({})",
        fmt::join(shapes, ", "));
  }
  return Status::ok();
}

Status ExecutionContext::allocate_arena(size_t bytes) {
  if (bytes <= arena_bytes_ && arena_ != nullptr) return Status::ok();
  const size_t rounded = std::max<size_t>(
      kArenaAlignment, (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment);
  auto* mem = static_cast<std::byte*>(std::aligned_alloc(kArenaAlignment, rounded));
  if (mem == nullptr) {
    return invalid_argument("cannot allocate the {}-byte activation arena", rounded);
  }
  std::free(arena_);
  arena_ = mem;
  arena_bytes_ = bytes;
  return Status::ok();
}

void ExecutionContext::place_values(const engine::MemoryLayout& layout) {
  const ir::Graph& g = engine_->graph();
  const auto& classes = engine_->value_classes();
  owned_outputs_.resize(g.outputs.size());
  for (size_t v = 0; v < g.values.size(); ++v) {
    const ir::Value& val = g.values[v];
    switch (classes[v]) {
      case engine::ValueClass::kArena:
        address_[v] = arena_ + layout.offsets[v];
        break;
      case engine::ValueClass::kConstant:
        address_[v] = const_cast<void*>(val.initializer->raw_data());
        break;
      case engine::ValueClass::kShape:
        address_[v] = shapes_.shape_values[v] ? shapes_.shape_values[v]->raw_data() : nullptr;
        break;
      default:
        address_[v] = nullptr;
    }
  }
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const auto v = static_cast<size_t>(g.outputs[i]);
    if (g.values[v].is_graph_input) continue;
    const size_t bytes =
        static_cast<size_t>(dims_numel(*shapes_.dims[v])) * dtype_size(g.values[v].desc.dtype);
    owned_outputs_[i].resize(bytes);
  }
}

Status ExecutionContext::check_bindings() const {
  const ir::Graph& g = engine_->graph();
  for (ir::ValueId v : g.inputs) {
    const ir::Value& val = g.value(v);
    if (user_address_[static_cast<size_t>(v)] == nullptr && !val.initializer) {
      return invalid_argument("input '{}' has no buffer: bind one with set_tensor_address",
                              val.name);
    }
  }
  return Status::ok();
}

void ExecutionContext::bind_views() {
  const ir::Graph& g = engine_->graph();
  for (ir::ValueId v : g.inputs) {
    const ir::Value& val = g.value(v);
    const void* user = user_address_[static_cast<size_t>(v)];
    address_[static_cast<size_t>(v)] =
        const_cast<void*>(user != nullptr ? user : val.initializer->raw_data());
  }
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const auto v = static_cast<size_t>(g.outputs[i]);
    if (g.values[v].is_graph_input) continue;
    const void* user = user_address_[v];
    address_[v] = const_cast<void*>(user != nullptr ? user : owned_outputs_[i].data());
  }
  auto view = [&](ir::ValueId v) {
    if (v == ir::kNoValue) return TensorView{};
    const auto idx = static_cast<size_t>(v);
    return TensorView{g.value(v).desc.dtype, *shapes_.dims[idx], address_[idx]};
  };
  for (RunLayer& layer : layers_) {
    const ir::Node& node = g.nodes[layer.node];
    layer.inputs.resize(node.inputs.size());
    layer.outputs.resize(node.outputs.size());
    for (size_t i = 0; i < node.inputs.size(); ++i) layer.inputs[i] = view(node.inputs[i]);
    for (size_t i = 0; i < node.outputs.size(); ++i) layer.outputs[i] = view(node.outputs[i]);
  }
}

Status ExecutionContext::prepare() {
  const engine::Plan& plan = engine_->plan();
  KILN_RETURN_IF_ERROR(choose_profile());
  std::vector<Dims> dims;
  for (const auto& d : input_dims_) dims.push_back(*d);
  KILN_ASSIGN_OR_RETURN(shapes_, engine::resolve_shapes(plan.graph, plan.layers, dims));
  const engine::MemoryLayout& planned = plan.profiles[static_cast<size_t>(profile_)].memory;
  const std::vector<int64_t> bytes =
      engine::arena_value_bytes(plan, engine_->value_classes(), shapes_);
  std::optional<engine::MemoryLayout> replanned;
  if (!engine::layout_fits(planned, bytes)) {
    // Shapes inside the profile but an activation larger than at its max shapes (a model whose
    // sizes are not monotonic in its inputs): plan again for these shapes.
    replanned = engine::layout_arena(plan, shapes_);
    ++replans_;
  }
  const engine::MemoryLayout& layout = replanned ? *replanned : planned;
  KILN_RETURN_IF_ERROR(allocate_arena(static_cast<size_t>(layout.arena_bytes)));
  place_values(layout);
  bind_views();
  for (RunLayer& layer : layers_) {
    Status st = layer.kernel->reshape(layer.inputs, layer.outputs);
    if (!st) return st.with_context(fmt::format("layer '{}'", plan.graph.nodes[layer.node].name));
  }
  shapes_dirty_ = bindings_dirty_ = false;
  return Status::ok();
}

Status ExecutionContext::execute() {
  KILN_RETURN_IF_ERROR(check_bindings());
  if (shapes_dirty_) {
    KILN_RETURN_IF_ERROR(prepare());
  } else if (bindings_dirty_) {
    bind_views();
    bindings_dirty_ = false;
  }
  // Runs of layers on the pool's threads go as one segment each (their parallel_fors dispatched
  // by spinning, not by an OpenMP region each); a layer on threads of its own runs between them.
  for (size_t i = 0; i < layers_.size();) {
    size_t end = i + 1;
    while (!layers_[i].own_threads && end < layers_.size() && !layers_[end].own_threads) ++end;
    Status st;
    if (pool_ != nullptr && end - i > 1) {
      pool_->run_segment([&] { st = run_layers(i, end); });
    } else {
      st = run_layers(i, end);
    }
    KILN_RETURN_IF_ERROR(st);
    i = end;
  }
  return Status::ok();
}

Status ExecutionContext::run_layers(size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i) {
    RunLayer& layer = layers_[i];
    Status st = layer.kernel->run(layer.inputs, layer.outputs);
    if (!st) {
      return st.with_context(fmt::format("layer '{}'", engine_->graph().nodes[layer.node].name));
    }
    if (layer_callback_) layer_callback_(layer.node);
  }
  return Status::ok();
}

Result<Dims> ExecutionContext::tensor_shape(std::string_view name) {
  KILN_ASSIGN_OR_RETURN(const ir::ValueId v, io(name));
  if (shapes_dirty_) KILN_RETURN_IF_ERROR(prepare());
  return *shapes_.dims[static_cast<size_t>(v)];
}

Result<const void*> ExecutionContext::tensor_address(std::string_view name) {
  KILN_ASSIGN_OR_RETURN(const ir::ValueId v, io(name));
  if (shapes_dirty_) KILN_RETURN_IF_ERROR(prepare());
  if (bindings_dirty_) {
    bind_views();
    bindings_dirty_ = false;
  }
  return static_cast<const void*>(address_[static_cast<size_t>(v)]);
}

Status ExecutionContext::bind_inputs(const NamedTensors& inputs) {
  const ir::Graph& g = engine_->graph();
  KILN_RETURN_IF_ERROR(check_inputs(g, inputs));
  for (ir::ValueId v : g.inputs) {
    const ir::Value& val = g.value(v);
    auto it = inputs.find(val.name);
    const Tensor& t = it != inputs.end() ? it->second : *val.initializer;
    KILN_RETURN_IF_ERROR(set_input_shape(val.name, t.dims()));
    KILN_RETURN_IF_ERROR(set_tensor_address(val.name, t.raw_data()));
  }
  return shapes_dirty_ ? prepare() : Status::ok();
}

Result<std::vector<Tensor>> ExecutionContext::run(const NamedTensors& inputs) {
  const ir::Graph& g = engine_->graph();
  KILN_RETURN_IF_ERROR(bind_inputs(inputs));
  KILN_RETURN_IF_ERROR(execute());
  std::vector<Tensor> out;
  for (ir::ValueId v : g.outputs) {
    const ir::Value& val = g.value(v);
    KILN_ASSIGN_OR_RETURN(Dims dims, tensor_shape(val.name));
    KILN_ASSIGN_OR_RETURN(const void* data, tensor_address(val.name));
    Tensor t(val.desc.dtype, std::move(dims));
    if (t.nbytes() > 0) std::memcpy(t.raw_data(), data, t.nbytes());
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace kiln::runtime
