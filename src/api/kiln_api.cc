// The public API (include/kiln/kiln.h) over the engine and runtime modules.

#include <fmt/format.h>

#include "engine/builder.h"
#include "engine/serialize.h"
#include "frontend/onnx/importer.h"
#include "kiln/kiln.h"
#include "parallel/openmp_wait.h"
#include "quant/calibration_file.h"
#include "runtime/engine.h"
#include "runtime/execution_context.h"

namespace kiln {

void use_kiln_openmp_wait(char** argv) { parallel::reexec_with_openmp_wait(argv); }

Network::Network(std::unique_ptr<ir::Graph> graph) : graph_(std::move(graph)) {}
Network::Network(Network&&) noexcept = default;
Network& Network::operator=(Network&&) noexcept = default;
Network::~Network() = default;

Result<Network> Network::from_onnx_file(const std::filesystem::path& path) {
  KILN_ASSIGN_OR_RETURN(ir::Graph graph, frontend::import_onnx_file(path));
  return Network(std::make_unique<ir::Graph>(std::move(graph)));
}

std::vector<TensorInfo> Engine::io_tensors() const {
  const ir::Graph& g = impl_->graph();
  std::vector<TensorInfo> out;
  for (ir::ValueId v : g.inputs) {
    out.push_back({g.value(v).name, g.value(v).desc.dtype, g.value(v).desc.to_string(), true});
  }
  for (ir::ValueId v : g.outputs) {
    out.push_back({g.value(v).name, g.value(v).desc.dtype, g.value(v).desc.to_string(), false});
  }
  return out;
}

int Engine::num_profiles() const { return static_cast<int>(impl_->plan().profiles.size()); }

Result<ShapeRange> Engine::profile_shape(int profile, std::string_view input) const {
  const auto& profiles = impl_->plan().profiles;
  if (profile < 0 || profile >= static_cast<int>(profiles.size())) {
    return invalid_argument("profile {} does not exist (the engine has {})", profile,
                            profiles.size());
  }
  for (const engine::InputRange& r : profiles[static_cast<size_t>(profile)].inputs) {
    if (r.input == input) return ShapeRange{r.min, r.opt, r.max};
  }
  return invalid_argument("'{}' is not an input of the engine", input);
}

Status Engine::save(const std::filesystem::path& path) const {
  return engine::save_plan(impl_->plan(), path);
}

Result<ExecutionContext> Engine::create_execution_context(int threads) const {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<runtime::ExecutionContext> ctx,
                        impl_->create_execution_context({.threads = threads}));
  return ExecutionContext(std::move(ctx));
}

Result<Engine> Builder::build(const Network& network, const BuilderConfig& config) {
  engine::BuildOptions options;
  options.profiles = config.profiles;
  options.passes.disabled = config.disabled_passes;
  options.threads = config.threads;
  options.int8 = config.int8;
  options.fp16 = config.fp16;
  if (config.int8_weight_bits != 7 && config.int8_weight_bits != 8) {
    return invalid_argument("int8_weight_bits {}: 8 or 7 expected", config.int8_weight_bits);
  }
  options.int8_weight_bits = config.int8_weight_bits;
  if (!config.calibration_file.empty()) {
    if (!config.int8) return invalid_argument("a calibration file is given without int8");
    Result<quant::Calibration> c = quant::read_calibration(config.calibration_file.string());
    if (!c.is_ok()) {
      return c.status().with_context(
          fmt::format("calibration file '{}'", config.calibration_file.string()));
    }
    options.calibration = std::move(c).value();
  }
  Result<engine::Plan> plan = engine::build_plan(network.graph(), options);
  if (!plan.is_ok()) return plan.status();
  if (config.log) {
    for (const std::string& line : plan->build_log) config.log(line);
  }
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<const runtime::Engine> e,
                        runtime::Engine::create(std::move(plan).value()));
  return Engine(std::move(e));
}

Result<Engine> Runtime::load(const std::filesystem::path& path) {
  KILN_ASSIGN_OR_RETURN(engine::Plan plan, engine::load_plan(path));
  Result<std::shared_ptr<const runtime::Engine>> e = runtime::Engine::create(std::move(plan));
  if (!e.is_ok()) return e.status().with_context(fmt::format("loading '{}'", path.string()));
  return Engine(std::move(e).value());
}

ExecutionContext::ExecutionContext(std::unique_ptr<runtime::ExecutionContext> impl)
    : impl_(std::move(impl)) {}
ExecutionContext::ExecutionContext(ExecutionContext&&) noexcept = default;
ExecutionContext& ExecutionContext::operator=(ExecutionContext&&) noexcept = default;
ExecutionContext::~ExecutionContext() = default;

Status ExecutionContext::set_input_shape(std::string_view input, std::span<const int64_t> dims) {
  return impl_->set_input_shape(input, dims);
}
Status ExecutionContext::set_tensor_address(std::string_view name, const void* data) {
  return impl_->set_tensor_address(name, data);
}
Result<Dims> ExecutionContext::tensor_shape(std::string_view name) {
  return impl_->tensor_shape(name);
}
Status ExecutionContext::execute() { return impl_->execute(); }
Result<std::vector<Tensor>> ExecutionContext::run(
    const std::map<std::string, Tensor, std::less<>>& inputs) {
  return impl_->run(inputs);
}

}  // namespace kiln
