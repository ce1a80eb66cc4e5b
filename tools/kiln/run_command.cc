#include "run_command.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <ostream>

#include "engine/serialize.h"
#include "frontend/onnx/importer.h"
#include "inputs.h"
#include "io/tensor_json.h"
#include "options.h"
#include "runtime/engine.h"
#include "runtime/execution_context.h"
#include "runtime/reference_executor.h"

namespace kiln::cli {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

Result<runtime::NamedTensors> make_run_inputs(const ir::Graph& g, const RunOptions& opts,
                                              const DefaultDims& fallback, std::ostream& out) {
  InputFlags flags;
  flags.seed = opts.seed;
  if (!opts.shapes.empty()) {
    KILN_ASSIGN_OR_RETURN(flags.shapes, parse_shapes("--shapes", opts.shapes));
  }
  if (!opts.load_inputs.empty()) {
    KILN_ASSIGN_OR_RETURN(flags.files, parse_named_files("--loadInputs", opts.load_inputs));
  }
  return make_inputs(g, flags, fallback, [&out](char severity, const std::string& text) {
    fmt::print(out, "[{}] {}\n", severity, text);
  });
}

void print_output(std::ostream& out, const std::string& name, const Tensor& t, int max_values) {
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) {
    const double v = t.value_as_double(i);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  fmt::print(out, "[I] output '{}': {}", name, t.desc());
  if (n > 0)
    fmt::print(out, "  min {:.6g}  max {:.6g}  mean {:.6g}", lo, hi, sum / static_cast<double>(n));
  fmt::print(out, "\n");
  std::vector<std::string> shown;
  for (int64_t i = 0; i < std::min<int64_t>(n, max_values); ++i) {
    shown.push_back(fmt::format("{:.6g}", t.value_as_double(i)));
  }
  if (!shown.empty()) {
    fmt::print(out, "      values: {}{}\n", fmt::join(shown, ", "), n > max_values ? ", ..." : "");
  }
}

void print_model_summary(std::ostream& out, const RunOptions& opts, const ir::Graph& g, double ms) {
  int64_t params = 0;
  for (const ir::Value& v : g.values) {
    if (v.initializer) params += v.initializer->numel();
  }
  fmt::print(out, "[I] model: {} (ai.onnx opset {}, producer '{}')\n", opts.onnx,
             g.opset_imports.count("") ? g.opset_imports.at("") : 0, g.producer);
  fmt::print(
      out, "[I] {} nodes, {} inputs, {} outputs, {:.2f}M parameters; imported in {:.1f} ms\n",
      g.nodes.size(), g.inputs.size(), g.outputs.size(), static_cast<double>(params) / 1e6, ms);
}

void print_times(std::ostream& out, std::string_view what, std::vector<double> times) {
  std::sort(times.begin(), times.end());
  double mean = 0;
  for (double t : times) mean += t / static_cast<double>(times.size());
  fmt::print(out, "[I] {}: {} iteration(s): min {:.2f} ms, median {:.2f} ms, mean {:.2f} ms\n",
             what, times.size(), times.front(), times[times.size() / 2], mean);
}

Status report_outputs(const RunOptions& opts, const ir::Graph& graph,
                      const std::vector<Tensor>& outputs, std::ostream& out) {
  std::vector<std::string> names;
  for (size_t i = 0; i < outputs.size(); ++i) {
    names.push_back(graph.value(graph.outputs[i]).name);
    print_output(out, names.back(), outputs[i], opts.print_values);
  }
  if (!opts.export_output.empty()) {
    KILN_RETURN_IF_ERROR(io::write_outputs_json(opts.export_output, names, outputs));
    fmt::print(out, "[I] outputs written to {}\n", opts.export_output);
  }
  return Status::ok();
}

Status run_onnx(const RunOptions& opts, std::ostream& out) {
  auto t0 = Clock::now();
  KILN_ASSIGN_OR_RETURN(ir::Graph graph, frontend::import_onnx_file(opts.onnx));
  print_model_summary(out, opts, graph, ms_since(t0));
  KILN_ASSIGN_OR_RETURN(auto exec, runtime::ReferenceExecutor::create(graph));
  KILN_ASSIGN_OR_RETURN(auto feeds, make_run_inputs(graph, opts, declared_dims, out));
  std::vector<double> times;
  std::vector<Tensor> outputs;
  for (int i = 0; i < opts.iterations; ++i) {
    t0 = Clock::now();
    KILN_ASSIGN_OR_RETURN(outputs, exec.run(feeds));
    times.push_back(ms_since(t0));
  }
  print_times(out, "reference executor", times);
  return report_outputs(opts, graph, outputs, out);
}

Status run_engine(const RunOptions& opts, std::ostream& out) {
  auto t0 = Clock::now();
  KILN_ASSIGN_OR_RETURN(engine::Plan plan, engine::load_plan(opts.load_engine));
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<const runtime::Engine> engine,
                        runtime::Engine::create(std::move(plan)));
  fmt::print(out, "[I] engine: {} ({} layers), loaded in {:.1f} ms\n", opts.load_engine,
             engine->plan().layers.size(), ms_since(t0));
  // The context's one-time work (kernels, oneDNN's primitives and packed weights, the arena) is
  // timed apart from the runs, as trtexec creates its context before timing.
  t0 = Clock::now();
  KILN_ASSIGN_OR_RETURN(auto ctx, engine->create_execution_context({.threads = opts.threads}));
  double setup_ms = ms_since(t0);
  const ir::Graph& graph = engine->graph();
  // Dynamic inputs default to the first profile's opt shapes, as trtexec does.
  auto opt_dims = [&](const ir::Value& in) {
    for (const engine::InputRange& r : engine->plan().profiles[0].inputs) {
      if (r.input == in.name) return r.opt;
    }
    return declared_dims(in);
  };
  KILN_ASSIGN_OR_RETURN(auto feeds, make_run_inputs(graph, opts, opt_dims, out));
  t0 = Clock::now();
  KILN_RETURN_IF_ERROR(ctx->bind_inputs(feeds));
  setup_ms += ms_since(t0);
  fmt::print(out, "[I] context ready in {:.1f} ms: profile {}, activation arena {} bytes\n",
             setup_ms, ctx->active_profile(), ctx->arena_bytes());
  std::vector<double> times;
  std::vector<Tensor> outputs;
  for (int i = 0; i < opts.iterations; ++i) {
    t0 = Clock::now();
    KILN_ASSIGN_OR_RETURN(outputs, ctx->run(feeds));
    times.push_back(ms_since(t0));
  }
  print_times(out, "engine", times);
  return report_outputs(opts, graph, outputs, out);
}

}  // namespace

Status run_command(const RunOptions& opts, std::ostream& out) {
  if (opts.onnx.empty() == opts.load_engine.empty()) {
    return invalid_argument("give exactly one of --onnx (reference executor) and --loadEngine");
  }
  if (opts.iterations < 1)
    return invalid_argument("--iterations must be at least 1, got {}", opts.iterations);
  return opts.onnx.empty() ? run_engine(opts, out) : run_onnx(opts, out);
}

}  // namespace kiln::cli
