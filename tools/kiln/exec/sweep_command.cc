#include "exec/sweep_command.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <ostream>

#include "engine/serialize.h"
#include "exec/benchmark.h"
#include "exec/exports.h"
#include "exec/flags.h"
#include "exec/report.h"
#include "exec/session.h"
#include "exec/throughput_search.h"
#include "frontend/onnx/importer.h"
#include "io/file_util.h"
#include "kiln/version.h"
#include "options.h"
#include "progress.h"

namespace kiln::cli::exec {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

struct SweepFlag {
  std::string_view name;
  bool takes_value;
  std::string_view help;
};

constexpr SweepFlag kOwnFlags[] = {
    {"--onnx", true, "the model (required)"},
    {"--out", true, "results folder, created if needed (required)"},
    {"--batch", true, "batch sizes B1,B2,...: the first dim of dynamic-batch inputs (required)"},
    {"--precisions", true, "fp32,fp16,int8 (default fp32)"},
    {"--calib", true,
     "INT8 ranges (kiln calibration or TensorRT cache), with int8 in --precisions"},
    {"--help", false, "this text"},
};

// kiln exec flags that set the benchmark policy and the shapes; passed to exec's parser.
constexpr SweepFlag kForwardedFlags[] = {
    {"--shapes", true, "other input dims (the batch dim is set per run)"},
    {"--iterations", true, "at least N timed queries per run (default 10)"},
    {"--warmUp", true, "warm-up ms per run (default 200)"},
    {"--duration", true, "at least s seconds per run (default 3)"},
    {"--percentile", true, "percentiles (default 90,95,99)"},
    {"--avgRuns", true, "trace averages (with --verbose)"},
    {"--infStreams", true, "concurrent streams per run (default 1)"},
    {"--threads", true, "threads per stream (default: the cores divided among the streams)"},
    {"--seed", true, "seed of the random inputs"},
    {"--disablePasses", true, "graph passes to skip"},
    {"--builderOptimizationLevel", true, "tuning effort of the builds, 0-5 (default 3)"},
    {"--verbose", false, "build log and each run's summary block"},
};

constexpr std::string_view kPrecisions[] = {"fp32", "fp16", "int8"};

const SweepFlag* find(std::span<const SweepFlag> flags, std::string_view name) {
  for (const SweepFlag& f : flags) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

Status unknown_sweep_flag(std::string_view name) {
  std::string_view best;
  size_t best_distance = SIZE_MAX;
  for (std::span<const SweepFlag> flags :
       {std::span<const SweepFlag>(kOwnFlags), std::span<const SweepFlag>(kForwardedFlags)}) {
    for (const SweepFlag& f : flags) {
      const size_t d = edit_distance(name, f.name);
      if (d < best_distance) {
        best = f.name;
        best_distance = d;
      }
    }
  }
  const size_t bare = name.size() - std::min<size_t>(name.find_first_not_of('-'), name.size());
  const std::string hint = best_distance <= std::clamp<size_t>(bare / 3, 1, 3)
                               ? fmt::format("; did you mean '{}'?", best)
                               : " (kiln sweep --help lists the flags)";
  for (const FlagDef& f : flag_table()) {
    if (f.name == name) {
      return invalid_argument("{} is a kiln exec flag that kiln sweep does not take{}", name, hint);
    }
  }
  return invalid_argument("unknown flag '{}'{}", name, hint);
}

Status apply_own(SweepOptions& s, std::string_view name, std::string_view value) {
  if (name == "--help") {
    s.help = true;
  } else if (value.empty()) {
    return invalid_argument("{}: empty value", name);
  } else if (name == "--onnx") {
    s.onnx = std::string(value);
  } else if (name == "--out") {
    s.out = std::string(value);
  } else if (name == "--calib") {
    s.calib = std::string(value);
  } else if (name == "--batch") {
    KILN_ASSIGN_OR_RETURN(s.batches, parse_batch_list(name, value));
  } else if (name == "--precisions") {
    KILN_ASSIGN_OR_RETURN(s.precisions, split_list(name, value));
    for (size_t i = 0; i < s.precisions.size(); ++i) {
      const std::string& p = s.precisions[i];
      if (std::find(std::begin(kPrecisions), std::end(kPrecisions), p) == std::end(kPrecisions)) {
        return invalid_argument("{}: '{}' is not one of fp32, fp16, int8", name, p);
      }
      if (std::find(s.precisions.begin(), s.precisions.begin() + i, p) !=
          s.precisions.begin() + i) {
        return invalid_argument("{}: '{}' is given twice", name, p);
      }
    }
  }
  return Status::ok();
}

// Splits `args` into sweep's own flags (applied) and exec's policy flags (returned).
Result<std::vector<std::string>> read_sweep_flags(std::span<const std::string> args,
                                                  SweepOptions& s) {
  std::vector<std::string> forwarded;
  std::vector<std::string_view> seen;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.size() < 2 || arg[0] != '-') {
      return invalid_argument("unexpected argument '{}': kiln sweep takes --flag=value options",
                              arg);
    }
    const size_t eq = arg.find('=');
    std::string_view name = std::string_view(arg).substr(0, eq);
    if (name == "-h") name = "--help";
    if (name == "-v") name = "--verbose";
    std::optional<std::string_view> value;
    if (eq != std::string::npos) value = std::string_view(arg).substr(eq + 1);
    const SweepFlag* own = find(kOwnFlags, name);
    const SweepFlag* flag = own != nullptr ? own : find(kForwardedFlags, name);
    if (flag == nullptr) return unknown_sweep_flag(name);
    if (!flag->takes_value && value) return invalid_argument("{} takes no value", name);
    if (flag->takes_value && !value) {
      if (i + 1 >= args.size() || args[i + 1].rfind("--", 0) == 0) {
        return invalid_argument("{} needs a value: {}=<value>", name, name);
      }
      value = args[++i];
    }
    if (own == nullptr) {
      forwarded.push_back(value ? fmt::format("{}={}", name, *value) : std::string(name));
      continue;
    }
    if (std::find(seen.begin(), seen.end(), own->name) != seen.end()) {
      return invalid_argument("{} is given more than once", own->name);
    }
    seen.push_back(own->name);
    KILN_RETURN_IF_ERROR(apply_own(s, name, value.value_or("")));
  }
  return forwarded;
}

Status validate_sweep(SweepOptions& s, const std::vector<std::string>& forwarded) {
  if (s.onnx.empty()) return invalid_argument("--onnx is required");
  if (s.out.empty()) return invalid_argument("--out is required (the results folder)");
  if (s.batches.empty()) return invalid_argument("--batch is required, e.g. --batch=1,4,8");
  const bool int8 = std::count(s.precisions.begin(), s.precisions.end(), "int8") > 0;
  if (!s.calib.empty() && !int8) return invalid_argument("--calib needs int8 in --precisions");
  std::vector<std::string> exec_args = {"--onnx=" + s.onnx};
  exec_args.insert(exec_args.end(), forwarded.begin(), forwarded.end());
  KILN_ASSIGN_OR_RETURN(s.exec, parse_exec_args(exec_args));
  s.exec.args = s.args;
  s.exec.batches = s.batches;
  return Status::ok();
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string profile_text(const engine::ProfileSpec& spec) {
  std::string out;
  for (const auto& [name, r] : spec) {
    out += fmt::format("{}:{}/{}/{};", name, dims_to_string(r.min), dims_to_string(r.opt),
                       dims_to_string(r.max));
  }
  return out;
}

// One precision's engine, built or reused from the cache.
struct SweepEngine {
  EnginePtr engine;
  fs::path path;
  bool reused = false;
  std::optional<double> build_ms, save_ms, load_ms;
};

Result<SweepEngine> cached_engine(const SweepOptions& s, const ir::Graph& graph,
                                  const engine::ProfileSpec& spec, const std::string& precision,
                                  uint64_t model_hash, ExecLog& log) {
  // Everything the engine depends on: the model, the precision, the profile, the passes, the
  // calibration, the tuning (its level and the thread count it times for), and the kiln that
  // builds it.
  std::string calib_bytes;
  if (precision == "int8" && !s.calib.empty()) {
    KILN_ASSIGN_OR_RETURN(calib_bytes, io::read_file(s.calib));
  }
  const std::string recipe =
      fmt::format("{}\n{}\n{}\n{}\n{}\n{:016x}\nlevel {} threads {}", precision, profile_text(spec),
                  s.exec.disable_passes, kVersion, kGitCommit, fnv1a64(calib_bytes),
                  s.exec.builder_optimization_level, s.exec.threads);
  SweepEngine e;
  e.path = fs::path(s.out) / "engines" /
           fmt::format("{}-{}-{:016x}.plan", fs::path(s.onnx).stem().string(), precision,
                       fnv1a64(recipe, model_hash));
  std::error_code ec;
  if (fs::exists(e.path, ec)) {
    const auto t0 = std::chrono::steady_clock::now();
    auto plan = engine::load_plan(e.path);
    auto engine =
        plan ? runtime::Engine::create(std::move(plan).value()) : Result<EnginePtr>(plan.status());
    if (engine) {
      e.engine = std::move(engine).value();
      e.reused = true;
      e.load_ms = ms_since(t0);
      log.info(fmt::format("{}: reusing cached engine {}", precision, e.path.string()));
      return e;
    }
    log.warn(fmt::format("{}: cached engine {} is unusable ({}); rebuilding", precision,
                         e.path.string(), engine.status().to_string()));
  }
  engine::BuildOptions options = tuning_build_options(s.exec);
  if (precision == "int8") {
    ExecOptions int8 = s.exec;
    int8.int8 = true;
    int8.calib = s.calib;
    KILN_RETURN_IF_ERROR(apply_exec_precision(int8, options, log));
  } else if (precision == "fp16") {
    ExecOptions fp16 = s.exec;
    fp16.fp16 = true;
    KILN_RETURN_IF_ERROR(apply_exec_precision(fp16, options, log));
  }
  if (!spec.empty()) options.profiles.push_back(spec);
  if (!s.exec.disable_passes.empty()) {
    KILN_ASSIGN_OR_RETURN(options.passes.disabled,
                          split_list("--disablePasses", s.exec.disable_passes));
  }
  auto t0 = std::chrono::steady_clock::now();
  KILN_ASSIGN_OR_RETURN(e.engine, build_engine_from(graph, options, log));
  e.build_ms = ms_since(t0);
  t0 = std::chrono::steady_clock::now();
  KILN_RETURN_IF_ERROR(engine::save_plan(e.engine->plan(), e.path));
  e.save_ms = ms_since(t0);
  log.info(fmt::format("{}: engine built in {} sec., saved to {}", precision,
                       format_number(*e.build_ms / 1000), e.path.string()));
  return e;
}

struct RunInputs {
  const SweepOptions* sweep;
  const SweepEngine* engine;
  const Environment* environment;
  std::string precision;
  int64_t batch;
};

// Benchmarks one batch, writes its summary file and returns its index entry.
Result<json> run_one(const RunInputs& in, ExecLog& log) {
  const SweepOptions& s = *in.sweep;
  const runtime::Engine& engine = *in.engine->engine;
  const InputFlags flags{search_input_shapes(engine, s.exec, in.batch), {}, s.exec.seed};
  KILN_ASSIGN_OR_RETURN(runtime::NamedTensors feeds, make_feeds(engine, flags, log));
  KILN_ASSIGN_OR_RETURN(std::vector<ContextPtr> owned,
                        make_contexts(engine, feeds, s.exec.inf_streams, s.exec.threads));
  std::vector<runtime::ExecutionContext*> contexts;
  for (const ContextPtr& c : owned) contexts.push_back(c.get());
  ExecOptions options = s.exec;
  options.save_engine = in.engine->path.string();
  RunRecord rec;
  rec.options = &options;
  rec.environment = *in.environment;
  rec.started_at = utc_timestamp();
  rec.build_ms = in.engine->build_ms;
  rec.save_ms = in.engine->save_ms;
  rec.load_ms = in.engine->load_ms;
  rec.precision = in.precision;
  rec.streams = s.exec.inf_streams;
  record_io(engine, *contexts[0], rec);
  const BenchmarkPolicy policy{s.exec.iterations, s.exec.warmup_ms, s.exec.duration_s * 1000};
  KILN_ASSIGN_OR_RETURN(BenchmarkTrace trace, run_benchmark(contexts, policy, {}));
  rec.summary = summarize(trace, s.exec.percentiles);
  rec.warnings = summary_warnings(rec.summary, s.exec.percentiles);
  for (const std::string& l : summary_lines(rec.summary, s.exec.percentiles)) log.verbose(l);
  const std::string file =
      fmt::format("{}-{}-b{}.json", fs::path(s.onnx).stem().string(), in.precision, in.batch);
  KILN_RETURN_IF_ERROR(write_json(fs::path(s.out) / file, summary_json(rec)));
  const Stats& c = rec.summary.compute;
  json percentiles = json::array();
  for (size_t i = 0; i < s.exec.percentiles.size(); ++i) {
    percentiles.push_back({{"percentile", s.exec.percentiles[i]}, {"ms", c.percentiles[i]}});
  }
  const double per_s = rec.summary.throughput_qps * static_cast<double>(in.batch);
  log.info(fmt::format("{} batch {}: {} qps, {} inferences/s, median {} ms, CoV {}%{}",
                       in.precision, in.batch, format_number(rec.summary.throughput_qps),
                       format_number(per_s), format_number(c.median), format_number(c.cov_percent),
                       c.cov_percent > kUnstableCovPercent ? " (unstable)" : ""));
  return json{{"precision", in.precision},
              {"batch", in.batch},
              {"streams", s.exec.inf_streams},
              {"engine", fs::relative(in.engine->path, s.out).string()},
              {"engine_reused", in.engine->reused},
              {"summary", file},
              {"queries", rec.summary.queries},
              {"throughput_qps", rec.summary.throughput_qps},
              {"inferences_per_s", per_s},
              {"latency_median_ms", c.median},
              {"latency_percentiles", std::move(percentiles)},
              {"cov_percent", c.cov_percent}};
}

std::vector<std::string> sweep_table(const json& runs) {
  std::vector<std::string> out = {
      "=== Sweep summary ===",
      "   Precision   Batch   Streams   Throughput(qps)   Inferences/s   Median(ms)   Summary"};
  for (const json& r : runs) {
    out.push_back(fmt::format(
        "{:>12}{:>8}{:>10}{:>18.2f}{:>15.2f}{:>13.4f}   {}", r["precision"].get<std::string>(),
        r["batch"].get<int64_t>(), r["streams"].get<int>(), r["throughput_qps"].get<double>(),
        r["inferences_per_s"].get<double>(), r["latency_median_ms"].get<double>(),
        r["summary"].get<std::string>()));
  }
  return out;
}

Status run_sweep(const SweepOptions& s, ExecLog& log, ProgressTarget progress) {
  const Environment env = capture_environment();
  std::error_code ec;
  fs::create_directories(fs::path(s.out) / "engines", ec);
  if (ec) return io_error("--out: cannot create '{}': {}", s.out, ec.message());
  KILN_ASSIGN_OR_RETURN(const std::string model_bytes, io::read_file(s.onnx));
  const uint64_t model_hash = fnv1a64(model_bytes);
  KILN_ASSIGN_OR_RETURN(const ir::Graph graph, frontend::import_onnx_file(s.onnx));
  KILN_ASSIGN_OR_RETURN(const engine::ProfileSpec spec, search_profile(graph, s.exec));
  log.info(fmt::format("Sweep of {}: precisions {}, batches {}, {} stream(s)", s.onnx,
                       fmt::join(s.precisions, ","), fmt::join(s.batches, ","),
                       s.exec.inf_streams));
  json runs = json::array();
  Progress bar(progress, "sweep", s.precisions.size() * s.batches.size());
  log.set_before_line([&] { bar.clear(); });  // log lines and the bar share the terminal
  struct Unhook {
    ExecLog& log;
    ~Unhook() { log.set_before_line(nullptr); }  // the bar dies with this scope
  } unhook{log};
  for (const std::string& precision : s.precisions) {
    KILN_ASSIGN_OR_RETURN(const SweepEngine e,
                          cached_engine(s, graph, spec, precision, model_hash, log));
    for (int64_t batch : s.batches) {
      bar.update(runs.size(), fmt::format("running {} batch {}", precision, batch));
      KILN_ASSIGN_OR_RETURN(json run, run_one({&s, &e, &env, precision, batch}, log));
      runs.push_back(std::move(run));
    }
  }
  bar.update(runs.size());
  log.info("");
  for (const std::string& l : sweep_table(runs)) log.info(l);
  const json index = {
      {"schema", kSweepIndexSchema},
      {"schema_version", kSweepIndexSchemaVersion},
      {"created_at", utc_timestamp()},
      {"command", s.args},
      {"model", {{"onnx", s.onnx}, {"fnv1a64", fmt::format("{:016x}", model_hash)}}},
      {"summary_schema", {{"schema", kSummarySchema}, {"schema_version", kSummarySchemaVersion}}},
      {"runs", std::move(runs)}};
  const fs::path index_path = fs::path(s.out) / "index.json";
  KILN_RETURN_IF_ERROR(write_json(index_path, index));
  log.info(fmt::format("Index written to {}", index_path.string()));
  return Status::ok();
}

}  // namespace

uint64_t fnv1a64(std::string_view bytes, uint64_t seed) {
  uint64_t h = seed;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

Result<SweepOptions> parse_sweep_args(std::span<const std::string> args) {
  SweepOptions s;
  s.args.assign(args.begin(), args.end());
  KILN_ASSIGN_OR_RETURN(const std::vector<std::string> forwarded, read_sweep_flags(args, s));
  if (s.help) return s;
  KILN_RETURN_IF_ERROR(validate_sweep(s, forwarded));
  return s;
}

std::string sweep_help() {
  std::string out =
      "kiln sweep: benchmark one model at every precision and batch size; one summary JSON per "
      "run and an index.\n"
      "  kiln sweep --onnx=m.onnx --batch=1,4,8,16 --out=results/ [--precisions=fp32] "
      "[--duration=1]\n\nSweep options:\n";
  for (const SweepFlag& f : kOwnFlags) out += fmt::format("  {:<28} {}\n", f.name, f.help);
  out += "\nBenchmark options (as in kiln exec):\n";
  for (const SweepFlag& f : kForwardedFlags) out += fmt::format("  {:<28} {}\n", f.name, f.help);
  out += "\nSee docs/exec.md.\n";
  return out;
}

int sweep_main(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  std::string command = "kiln sweep";
  for (const std::string& a : args) command += " " + a;
  const std::string banner =
      fmt::format("kiln.sweep [kiln v{}] [git {}] # {}", kVersion, kGitCommit, command);
  Result<SweepOptions> options = parse_sweep_args(args);
  if (options && options->help) {
    out << sweep_help();
    return 0;
  }
  ExecLog log(out, options && options->exec.verbose);
  return run_with_banner(log, banner, out, err, [&] {
    return options ? run_sweep(*options, log, {&err, Progress::stderr_is_terminal()})
                   : options.status();
  });
}

}  // namespace kiln::cli::exec
