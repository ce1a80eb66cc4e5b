#include "exec/exec_command.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <ostream>
#include <sstream>

#include "engine/builder.h"
#include "engine/serialize.h"
#include "exec/benchmark.h"
#include "exec/exports.h"
#include "exec/option_blocks.h"
#include "exec/report.h"
#include "exec/session.h"
#include "exec/throughput_search.h"
#include "frontend/onnx/importer.h"
#include "inputs.h"
#include "io/tensor_json.h"
#include "kiln/version.h"
#include "options.h"
#include "precision_flags.h"
#include "runtime/engine.h"
#include "runtime/execution_context.h"

namespace kiln::cli::exec {
namespace {

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Fails before any work when an output file cannot be created where asked.
Status check_output_folders(const ExecOptions& o) {
  const std::pair<std::string_view, const std::string*> files[] = {
      {"--saveEngine", &o.save_engine},       {"--exportTimes", &o.export_times},
      {"--exportProfile", &o.export_profile}, {"--exportLayerInfo", &o.export_layer_info},
      {"--exportOutput", &o.export_output},   {"--exportSummary", &o.export_summary},
  };
  for (const auto& [flag, path] : files) {
    if (path->empty()) continue;
    const std::filesystem::path folder = std::filesystem::path(*path).parent_path();
    std::error_code ec;
    if (!folder.empty() && !std::filesystem::is_directory(folder, ec)) {
      return not_found("{}: folder '{}' does not exist", flag, folder.string());
    }
  }
  return Status::ok();
}

Result<EnginePtr> build_engine(const ExecOptions& o, ExecLog& log, RunRecord& rec) {
  log.info(fmt::format("Parsing ONNX model {}", o.onnx));
  auto t0 = Clock::now();
  KILN_ASSIGN_OR_RETURN(ir::Graph graph, frontend::import_onnx_file(o.onnx));
  rec.import_ms = ms_since(t0);
  log.info(fmt::format("Finished parsing network model. Parse time: {}",
                       format_number(*rec.import_ms / 1000)));
  engine::BuildOptions options = tuning_build_options(o);
  KILN_RETURN_IF_ERROR(apply_exec_precision(o, options, log));
  options.profiles = o.profiles;
  const bool ranges = !o.min_shapes.empty() || !o.opt_shapes.empty() || !o.max_shapes.empty();
  if (o.throughput_search && !ranges) {
    // One profile spanning every batch the search tries.
    KILN_ASSIGN_OR_RETURN(engine::ProfileSpec spec, search_profile(graph, o));
    options.profiles.clear();
    if (!spec.empty()) options.profiles.push_back(std::move(spec));
  }
  if (!o.disable_passes.empty()) {
    KILN_ASSIGN_OR_RETURN(options.passes.disabled, split_list("--disablePasses", o.disable_passes));
  }
  t0 = Clock::now();
  KILN_ASSIGN_OR_RETURN(EnginePtr engine, build_engine_from(std::move(graph), options, log));
  rec.build_ms = ms_since(t0);
  log.info(fmt::format("Engine built in {} sec.", format_number(*rec.build_ms / 1000)));
  log.info(fmt::format("{} layers, {} profile(s)", engine->plan().layers.size(),
                       engine->plan().profiles.size()));
  if (!o.save_engine.empty()) {
    t0 = Clock::now();
    KILN_RETURN_IF_ERROR(engine::save_plan(engine->plan(), o.save_engine));
    rec.save_ms = ms_since(t0);
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(o.save_engine, ec);
    log.info(fmt::format("Saved engine to {} ({:.2f} MiB) in {} sec.", o.save_engine,
                         ec ? 0.0 : static_cast<double>(bytes) / (1 << 20),
                         format_number(*rec.save_ms / 1000)));
  }
  return engine;
}

Result<EnginePtr> load_engine(const ExecOptions& o, ExecLog& log, RunRecord& rec) {
  const auto t0 = Clock::now();
  engine::EngineFileInfo info;
  KILN_ASSIGN_OR_RETURN(engine::Plan plan, engine::load_plan(o.load_engine, {}, &info));
  KILN_ASSIGN_OR_RETURN(EnginePtr engine, runtime::Engine::create(std::move(plan)));
  rec.load_ms = ms_since(t0);
  log.info(fmt::format("Loaded engine {}: {:.2f} MiB, format {}, built by kiln {}", o.load_engine,
                       static_cast<double>(info.file_size) / (1 << 20), info.format_version,
                       info.kiln_version));
  log.info(fmt::format("Engine loaded in {} sec.", format_number(*rec.load_ms / 1000)));
  return engine;
}

// The dims each graph input runs with: --shapes, else the first profile's opt shapes.
std::vector<Dims> run_dims(const engine::Plan& plan, const ExecOptions& o) {
  std::vector<Dims> dims;
  for (size_t i = 0; i < plan.graph.inputs.size(); ++i) {
    const ir::Value& in = plan.graph.value(plan.graph.inputs[i]);
    if (auto it = o.inference_shapes.find(in.name); it != o.inference_shapes.end()) {
      dims.push_back(it->second);
    } else if (!plan.profiles.empty() && i < plan.profiles[0].inputs.size()) {
      dims.push_back(plan.profiles[0].inputs[i].opt);
    } else {
      dims.push_back(declared_dims(in));
    }
  }
  return dims;
}

Status report_layer_info(const engine::Plan& plan, const ExecOptions& o, ExecLog& log) {
  if (!o.dump_layer_info && o.export_layer_info.empty()) return Status::ok();
  // Concrete dims at the run shapes when they resolve; the model's dims (-1 dynamic) otherwise.
  auto resolved = engine::resolve_shapes(plan.graph, plan.layers, run_dims(plan, o));
  const engine::ResolvedShapes* shapes = resolved ? &*resolved : nullptr;
  const nlohmann::ordered_json info = layer_info_json(plan, shapes, o.profiling_verbosity);
  if (o.dump_layer_info) {
    log.info("Layer Information:");
    for (const std::string& line : layer_info_lines(info)) log.info(line);
  }
  if (!o.export_layer_info.empty()) {
    KILN_RETURN_IF_ERROR(write_json(o.export_layer_info, info));
    log.info(fmt::format("Layer information written to {}", o.export_layer_info));
  }
  return Status::ok();
}

Result<std::vector<Tensor>> read_outputs(runtime::ExecutionContext& ctx) {
  std::vector<Tensor> out;
  for (ir::ValueId v : ctx.engine().graph().outputs) {
    const ir::Value& val = ctx.engine().graph().value(v);
    KILN_ASSIGN_OR_RETURN(Dims dims, ctx.tensor_shape(val.name));
    KILN_ASSIGN_OR_RETURN(const void* data, ctx.tensor_address(val.name));
    Tensor t(val.desc.dtype, std::move(dims));
    if (t.nbytes() > 0) std::memcpy(t.raw_data(), data, t.nbytes());
    out.push_back(std::move(t));
  }
  return out;
}

void print_summary(const BenchmarkTrace& trace, const BenchmarkSummary& s, const ExecOptions& o,
                   ExecLog& log, RunRecord& rec) {
  for (const std::string& l : prolog_lines(s, o.warmup_ms)) log.info(l);
  if (log.is_verbose()) {
    log.verbose("");
    for (const std::string& l : trace_lines(trace.timed, o.avg_runs)) log.verbose(l);
  }
  log.info("");
  for (const std::string& l : summary_lines(s, o.percentiles)) log.info(l);
  rec.warnings = summary_warnings(s, o.percentiles);
  for (const std::string& l : rec.warnings) log.warn(l);
  log.info("Explanations of the performance metrics are printed in the verbose logs.");
  for (const std::string& l : metric_explanations()) log.verbose(l);
  log.info("");
}

Status run_profile(const ExecOptions& o, std::span<runtime::ExecutionContext* const> contexts,
                   std::vector<std::unique_ptr<LayerProfiler>>& timed_profilers, size_t nodes,
                   ExecLog& log, RunRecord& rec) {
  LayerProfiler merged(nodes);
  if (o.separate_profile_run) {
    log.info("Profiling: a separate run on stream 0 with the same warm-up and iteration policy");
    LayerProfiler* p = &merged;
    KILN_RETURN_IF_ERROR(run_benchmark(contexts.first(1),
                                       {o.iterations, o.warmup_ms, o.duration_s * 1000},
                                       std::span<LayerProfiler* const>(&p, 1))
                             .status());
    rec.profile_source = "separate profiling run";
  } else {
    for (const auto& p : timed_profilers) merged.merge(*p);
    rec.profile_source = "timed run";
    log.warn(
        "The per-layer profile was measured during the timed run: its layer callbacks add time to "
        "the figures above. Add --separateProfileRun for undisturbed timings.");
  }
  rec.profile = merged.report();
  if (o.dump_profile) {
    log.info(fmt::format("Per-layer profile from the {}:", rec.profile_source));
    for (const std::string& l : profile_table(*rec.profile, rec.layer_names)) log.info(l);
  }
  if (!o.export_profile.empty()) {
    KILN_RETURN_IF_ERROR(write_json(o.export_profile, profile_json(*rec.profile, rec.layer_names)));
    log.info(fmt::format("Profile written to {}", o.export_profile));
  }
  return Status::ok();
}

Status report_outputs(const ExecOptions& o, runtime::ExecutionContext& ctx, ExecLog& log) {
  if (!o.dump_output && o.export_output.empty()) return Status::ok();
  KILN_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, read_outputs(ctx));
  std::vector<std::string> names;
  for (ir::ValueId v : ctx.engine().graph().outputs) {
    names.push_back(ctx.engine().graph().value(v).name);
  }
  if (o.dump_output) {
    log.info("Output Tensors:");
    for (size_t i = 0; i < outputs.size(); ++i) {
      KILN_ASSIGN_OR_RETURN(nlohmann::json j, io::tensor_to_json(outputs[i], names[i]));
      log.info(fmt::format("{}: ({})", names[i], dims_to_string(outputs[i].dims())));
      std::string values;
      for (const nlohmann::json& v : j["values"]) {
        if (!values.empty()) values += ' ';
        values += v.dump();
      }
      log.info(values);
    }
  }
  if (!o.export_output.empty()) {
    KILN_RETURN_IF_ERROR(io::write_outputs_json(o.export_output, names, outputs));
    log.info(fmt::format("Outputs written to {}", o.export_output));
  }
  return Status::ok();
}

Status run_inference(const ExecOptions& o, const runtime::Engine& engine, ExecLog& log,
                     RunRecord& rec) {
  KILN_ASSIGN_OR_RETURN(runtime::NamedTensors feeds,
                        make_feeds(engine, {o.inference_shapes, o.load_inputs, o.seed}, log));
  const Clock::time_point t0 = Clock::now();
  KILN_ASSIGN_OR_RETURN(std::vector<ContextPtr> owned,
                        make_contexts(engine, feeds, o.inf_streams, o.threads));
  log.info(fmt::format("Created {} execution context(s) in {} sec, activation arena {} MiB each",
                       owned.size(), format_number(ms_since(t0) / 1000),
                       format_number(static_cast<double>(owned[0]->arena_bytes()) / (1 << 20))));
  std::vector<runtime::ExecutionContext*> contexts;
  for (const ContextPtr& c : owned) contexts.push_back(c.get());
  record_io(engine, *contexts[0], rec);
  rec.streams = o.inf_streams;
  const size_t nodes = engine.graph().nodes.size();
  std::vector<std::unique_ptr<LayerProfiler>> profilers;
  std::vector<LayerProfiler*> profiler_ptrs;
  if (o.wants_profile() && !o.separate_profile_run) {
    for (size_t i = 0; i < contexts.size(); ++i) {
      profilers.push_back(std::make_unique<LayerProfiler>(nodes));
      profiler_ptrs.push_back(profilers.back().get());
    }
  }
  log.info(fmt::format("Starting inference: {} stream(s)", contexts.size()));
  const BenchmarkPolicy policy{o.iterations, o.warmup_ms, o.duration_s * 1000};
  KILN_ASSIGN_OR_RETURN(BenchmarkTrace trace, run_benchmark(contexts, policy, profiler_ptrs));
  rec.summary = summarize(trace, o.percentiles);
  print_summary(trace, rec.summary, o, log, rec);
  if (o.wants_profile()) {
    KILN_RETURN_IF_ERROR(run_profile(o, contexts, profilers, nodes, log, rec));
  }
  KILN_RETURN_IF_ERROR(report_outputs(o, *contexts[0], log));
  if (!o.export_times.empty()) {
    KILN_RETURN_IF_ERROR(write_json(o.export_times, times_json(trace.timed)));
    log.info(fmt::format("Times written to {}", o.export_times));
  }
  return Status::ok();
}

Status run_search(const ExecOptions& o, const runtime::Engine& engine, ExecLog& log,
                  RunRecord& rec) {
  const int max_streams =
      o.max_streams > 0 ? o.max_streams : std::max(1, rec.environment.cpus_allowed);
  KILN_ASSIGN_OR_RETURN(SearchResult r, run_throughput_search(engine, o, max_streams, log));
  log.info("");
  for (const std::string& l : search_lines(r)) log.info(l);
  if (!r.best) {
    const auto fastest = std::min_element(r.candidates.begin(), r.candidates.end(),
                                          [](const SearchCandidate& a, const SearchCandidate& b) {
                                            return a.latency_ms < b.latency_ms;
                                          });
    return invalid_argument(
        "--latencyBound={} ms: no batch and stream count meets it; the lowest percentile({}%) "
        "latency was {} ms (batch {}, {} stream(s))",
        format_number(o.latency_bound_ms), format_number(r.percentile),
        format_number(fastest->latency_ms), fastest->batch, fastest->streams);
  }
  const SearchCandidate& best = r.candidates[*r.best];
  log.info("");
  log.info(fmt::format("The best configuration's run: batch {}, {} stream(s)", best.batch,
                       best.streams));
  rec.streams = best.streams;
  rec.summary = best.summary;
  print_summary(r.best_trace, rec.summary, o, log, rec);
  // The inputs and outputs at the winning batch, for the summary (their set-up was logged).
  std::ostringstream quiet;
  ExecLog unlogged(quiet, false);
  KILN_ASSIGN_OR_RETURN(
      runtime::NamedTensors feeds,
      make_feeds(engine, {search_input_shapes(engine, o, best.batch), {}, o.seed}, unlogged));
  KILN_ASSIGN_OR_RETURN(std::vector<ContextPtr> one, make_contexts(engine, feeds, 1, o.threads));
  record_io(engine, *one[0], rec);
  if (!o.export_times.empty()) {
    KILN_RETURN_IF_ERROR(write_json(o.export_times, times_json(r.best_trace.timed)));
    log.info(fmt::format("Times written to {}", o.export_times));
  }
  rec.search = std::move(r);
  return Status::ok();
}

}  // namespace

Status exec_command(const ExecOptions& o, ExecLog& log) {
  RunRecord rec;
  rec.options = &o;
  rec.environment = capture_environment();
  rec.started_at = utc_timestamp();
  for (const std::string& l : option_block_lines(o, rec.environment)) log.info(l);
  for (const std::string& note : o.notes) log.warn(note);
  KILN_RETURN_IF_ERROR(check_output_folders(o));
  KILN_ASSIGN_OR_RETURN(EnginePtr engine,
                        o.onnx.empty() ? load_engine(o, log, rec) : build_engine(o, log, rec));
  for (const ir::Node& node : engine->graph().nodes) rec.layer_names.push_back(node.name);
  rec.precision = engine_precision(engine->plan());
  KILN_RETURN_IF_ERROR(report_layer_info(engine->plan(), o, log));
  if (o.skip_inference) {
    log.info("Skipped inference phase since --skipInference is added.");
    return Status::ok();
  }
  KILN_RETURN_IF_ERROR(o.throughput_search ? run_search(o, *engine, log, rec)
                                           : run_inference(o, *engine, log, rec));
  if (!o.export_summary.empty()) {
    KILN_RETURN_IF_ERROR(write_json(o.export_summary, summary_json(rec)));
    log.info(fmt::format("Summary written to {}", o.export_summary));
  }
  return Status::ok();
}

int exec_main(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  std::string command = "kiln exec";
  for (const std::string& a : args) command += " " + a;
  const std::string banner =
      fmt::format("kiln.exec [kiln v{}] [git {}] # {}", kVersion, kGitCommit, command);
  Result<ExecOptions> options = parse_exec_args(args);
  if (options && options->help) {
    out << exec_help();
    return 0;
  }
  ExecLog log(out, options && options->verbose);
  return run_with_banner(log, banner, out, err,
                         [&] { return options ? exec_command(*options, log) : options.status(); });
}

}  // namespace kiln::cli::exec
