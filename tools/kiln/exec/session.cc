#include "exec/session.h"

#include "precision_flags.h"
#include "progress.h"

namespace kiln::cli::exec {

Result<EnginePtr> build_engine_from(ir::Graph graph, const engine::BuildOptions& options,
                                    ExecLog& log) {
  // Progress per layer on stderr (stdout carries trtexec's log lines that parsers read).
  Progress bar(stderr_progress(), "build", 0);
  engine::BuildOptions with_progress = options;
  with_progress.progress = [&](size_t done, size_t total, std::string_view layer) {
    bar.set_total(total);
    bar.update(done, layer);
  };
  KILN_ASSIGN_OR_RETURN(engine::Plan plan, engine::build_plan(std::move(graph), with_progress));
  for (const std::string& line : plan.build_log) {
    if (line.rfind("warning: ", 0) == 0) {
      log.warn(line.substr(9));
    } else {
      log.verbose(line);
    }
  }
  return runtime::Engine::create(std::move(plan));
}

void record_io(const runtime::Engine& engine, runtime::ExecutionContext& ctx, RunRecord& rec) {
  const ir::Graph& g = engine.graph();
  auto info = [&](ir::ValueId v) {
    const ir::Value& val = g.value(v);
    auto dims = ctx.tensor_shape(val.name);
    return TensorInfo{val.name, std::string(dtype_name(val.desc.dtype)),
                      dims ? *dims : declared_dims(val)};
  };
  rec.inputs.clear();
  rec.outputs.clear();
  for (ir::ValueId v : g.inputs) rec.inputs.push_back(info(v));
  for (ir::ValueId v : g.outputs) rec.outputs.push_back(info(v));
}

Result<runtime::NamedTensors> make_feeds(const runtime::Engine& engine, const InputFlags& flags,
                                         ExecLog& log) {
  const engine::Plan& plan = engine.plan();
  auto opt_dims = [&](const ir::Value& in) {
    for (const engine::InputRange& r : plan.profiles[0].inputs) {
      if (r.input == in.name) return r.opt;
    }
    return declared_dims(in);
  };
  return make_inputs(plan.graph, flags, opt_dims,
                     [&log](char severity, const std::string& text) { log.line(severity, text); });
}

engine::BuildOptions tuning_build_options(const ExecOptions& o) {
  engine::BuildOptions options;
  options.optimization_level = o.builder_optimization_level;
  options.budget_s = o.build_budget_s;
  options.tactic_sources = o.tactic_sources;
  options.timing_cache_path = o.timing_cache_file;
  options.threads = o.threads;
  return options;
}

Status apply_exec_precision(const ExecOptions& o, engine::BuildOptions& b, ExecLog& log) {
  PrecisionFlags flags{.fp16 = o.fp16,
                       .int8 = o.int8,
                       .best = o.best,
                       .calib = o.calib,
                       .layer_precisions = o.layer_precisions,
                       .constraints = o.precision_constraints,
                       .int8_weight_bits = o.int8_weight_bits};
  std::vector<std::string> warnings;
  KILN_RETURN_IF_ERROR(apply_precision_flags(flags, o.onnx, b, warnings));
  for (const std::string& w : warnings) log.warn(w);
  return Status::ok();
}

Result<std::vector<ContextPtr>> make_contexts(const runtime::Engine& engine,
                                              const runtime::NamedTensors& feeds, int n,
                                              int threads) {
  std::vector<ContextPtr> contexts;
  for (int i = 0; i < n; ++i) {
    KILN_ASSIGN_OR_RETURN(ContextPtr ctx, engine.create_execution_context({.threads = threads}));
    // Resolves shapes, picks the profile, allocates the arena and reshapes the kernels now.
    KILN_RETURN_IF_ERROR(ctx->bind_inputs(feeds));
    contexts.push_back(std::move(ctx));
  }
  return contexts;
}

}  // namespace kiln::cli::exec
