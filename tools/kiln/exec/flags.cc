// Every `kiln exec` flag, its value parser and its validation, in one table.
#include "exec/flags.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

#include "options.h"  // tools/kiln/options.h: the shared value parsers

namespace kiln::cli::exec {
namespace {

// Integer in [lo, hi], the whole value.
Result<int64_t> parse_int(const FlagUse& u, int64_t lo, int64_t hi) {
  const std::string_view v = *u.value;
  int64_t x = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (v.empty() || ec != std::errc() || ptr != v.data() + v.size()) {
    return invalid_argument("{}: '{}' is not an integer", u.name, v);
  }
  if (x < lo || x > hi) return invalid_argument("{}: {} is not in [{}, {}]", u.name, x, lo, hi);
  return x;
}

Status set_path(const FlagUse& u, std::string& out) {
  if (u.value->empty()) return invalid_argument("{}: empty file name", u.name);
  out = std::string(*u.value);
  return Status::ok();
}

Status set_int(const FlagUse& u, int& out, int64_t lo, int64_t hi) {
  KILN_ASSIGN_OR_RETURN(const int64_t x, parse_int(u, lo, hi));
  out = static_cast<int>(x);
  return Status::ok();
}

Status parse_percentiles(ExecOptions& o, const FlagUse& u) {
  KILN_ASSIGN_OR_RETURN(auto items, split_list(u.name, *u.value));
  o.percentiles.clear();
  for (const std::string& item : items) {
    KILN_ASSIGN_OR_RETURN(const double p, parse_real(u.name, item));
    if (p < 0 || p > 100) return invalid_argument("{}: {} is not in [0, 100]", u.name, item);
    o.percentiles.push_back(p);
  }
  return Status::ok();
}

Status parse_warm_up(ExecOptions& o, const FlagUse& u) {
  KILN_ASSIGN_OR_RETURN(o.warmup_ms, parse_real(u.name, *u.value));
  if (o.warmup_ms < 0) return invalid_argument("{}: {} ms is negative", u.name, *u.value);
  return Status::ok();
}

Status parse_duration(ExecOptions& o, const FlagUse& u) {
  KILN_ASSIGN_OR_RETURN(o.duration_s, parse_real(u.name, *u.value));
  if (o.duration_s == -1) {
    return unsupported("{}=-1 (run until interrupted) is not implemented: give a duration in s",
                       u.name);
  }
  if (o.duration_s < 0) return invalid_argument("{}: {} s is negative", u.name, *u.value);
  return Status::ok();
}

Status parse_threads(ExecOptions& o, const FlagUse& u) {
  if (!u.value) {
    o.notes.push_back(
        "--threads: trtexec's one host thread per inference stream is how kiln always runs "
        "--infStreams; kiln's --threads=N sets worker threads per stream");
    return Status::ok();
  }
  return set_int(u, o.threads, 1, 1024);
}

Status parse_batches(ExecOptions& o, const FlagUse& u) {
  KILN_ASSIGN_OR_RETURN(o.batches, parse_batch_list(u.name, *u.value));
  return Status::ok();
}

Status parse_latency_bound(ExecOptions& o, const FlagUse& u) {
  KILN_ASSIGN_OR_RETURN(o.latency_bound_ms, parse_real(u.name, *u.value));
  if (o.latency_bound_ms <= 0)
    return invalid_argument("{}: {} ms is not positive", u.name, *u.value);
  return Status::ok();
}

Status parse_seed(ExecOptions& o, const FlagUse& u) {
  const std::string_view v = *u.value;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), o.seed);
  if (v.empty() || ec != std::errc() || ptr != v.data() + v.size()) {
    return invalid_argument("{}: '{}' is not a non-negative 64-bit integer", u.name, v);
  }
  return Status::ok();
}

Status parse_shape_flag(std::vector<std::string>& out, const FlagUse& u) {
  KILN_RETURN_IF_ERROR(parse_shapes(u.name, *u.value).status());
  out.emplace_back(*u.value);
  return Status::ok();
}

Status parse_layer_precisions(ExecOptions& o, const FlagUse& u) {
  KILN_ASSIGN_OR_RETURN(o.layer_precisions, parse_named_values(u.name, *u.value, "precision"));
  for (const auto& [layer, precision] : o.layer_precisions) {
    if (std::count(layer.begin(), layer.end(), '*') > 1) {
      return invalid_argument("{}: '{}' has more than one '*' wildcard", u.name, layer);
    }
    if (precision != "fp32" && precision != "fp16" && precision != "bf16" && precision != "int8") {
      return invalid_argument("{}: layer '{}': precision '{}' is not one of fp32, fp16, bf16, int8",
                              u.name, layer, precision);
    }
  }
  return Status::ok();
}

Status parse_precision_constraints(ExecOptions& o, const FlagUse& u) {
  const std::string_view v = *u.value;
  if (v != "none" && v != "prefer" && v != "obey") {
    return invalid_argument("{}: '{}' is not one of none, prefer, obey", u.name, v);
  }
  o.precision_constraints = std::string(v);
  return Status::ok();
}

Status parse_tactic_sources(ExecOptions& o, const FlagUse& u) {
  KILN_ASSIGN_OR_RETURN(auto items, split_list(u.name, *u.value));
  for (const std::string& item : items) {
    const bool named = item.size() > 1 && (item[0] == '+' || item[0] == '-') &&
                       std::all_of(item.begin() + 1, item.end(), [](char c) {
                         return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                       });
    if (!named) {
      return invalid_argument("{}: '{}' is not +name or -name (e.g. -CUDNN,+CUBLAS)", u.name, item);
    }
  }
  o.tactic_sources = std::move(items);
  return Status::ok();
}

// "workspace:1024" (MiB), "workspace:1G"; suffixes B, K, M, G as in trtexec.
Status parse_mem_pool_size(ExecOptions& o, const FlagUse& u) {
  KILN_ASSIGN_OR_RETURN(auto pools, parse_named_values(u.name, *u.value, "size"));
  static constexpr std::array<std::string_view, 5> kPools = {"workspace", "dlaSRAM", "dlaLocalDRAM",
                                                             "dlaGlobalDRAM", "tacticSharedMem"};
  for (const auto& [pool, size] : pools) {
    if (std::find(kPools.begin(), kPools.end(), pool) == kPools.end()) {
      return invalid_argument("{}: unknown pool '{}' (pools: {})", u.name, pool,
                              fmt::join(kPools, ", "));
    }
    std::string_view number = size;
    double scale = 1;  // MiB
    if (const char last = size.back(); last == 'B' || last == 'K' || last == 'M' || last == 'G') {
      number.remove_suffix(1);
      scale = last == 'B' ? 1.0 / (1 << 20) : last == 'K' ? 1.0 / 1024 : last == 'M' ? 1 : 1024;
    }
    KILN_ASSIGN_OR_RETURN(const double mib, parse_real(u.name, number));
    if (mib < 0) return invalid_argument("{}: pool '{}': negative size {}", u.name, pool, size);
    o.mem_pool_mib[pool] = mib * scale;
  }
  return Status::ok();
}

Status parse_profiling_verbosity(ExecOptions& o, const FlagUse& u) {
  const std::string_view v = *u.value;
  if (v == "layer_names_only") {
    o.profiling_verbosity = ProfilingVerbosity::kLayerNamesOnly;
  } else if (v == "detailed") {
    o.profiling_verbosity = ProfilingVerbosity::kDetailed;
  } else if (v == "none") {
    o.profiling_verbosity = ProfilingVerbosity::kNone;
  } else {
    return invalid_argument("{}: '{}' is not one of layer_names_only, detailed, none", u.name, v);
  }
  return Status::ok();
}

#define KILN_PATH_FLAG(member) \
  [](ExecOptions& o, const FlagUse& u) { return set_path(u, o.member); }
#define KILN_BOOL_FLAG(member)         \
  [](ExecOptions& o, const FlagUse&) { \
    o.member = true;                   \
    return Status::ok();               \
  }

const FlagDef kFlags[] = {
    // Model and engine.
    {"--onnx", Arity::kValue, "Model", "<file>", "ONNX model to build an engine from",
     KILN_PATH_FLAG(onnx)},
    {"--loadEngine", Arity::kValue, "Model", "<file>", "Load an engine file (from --saveEngine)",
     KILN_PATH_FLAG(load_engine)},
    {"--saveEngine", Arity::kValue, "Model", "<file>", "Save the built engine",
     KILN_PATH_FLAG(save_engine)},
    {"--skipInference", Arity::kNone, "Model", "", "Build (and save) the engine, then stop",
     KILN_BOOL_FLAG(skip_inference)},
    // Build.
    {"--shapes", Arity::kValue, "Build", "spec",
     "Inference shapes: in:1x3x224x224[,...]; names may be quoted ('in:0':1x3). Without "
     "--minShapes/--maxShapes also the build profile (min = opt = max)",
     [](ExecOptions& o, const FlagUse& u) {
       KILN_ASSIGN_OR_RETURN(o.inference_shapes, parse_shapes(u.name, *u.value));
       o.shapes = std::string(*u.value);
       return Status::ok();
     }},
    {"--minShapes", Arity::kValue, "Build", "spec",
     "Smallest shapes of a profile (repeat the three flags for more profiles)",
     [](ExecOptions& o, const FlagUse& u) { return parse_shape_flag(o.min_shapes, u); }, true},
    {"--optShapes", Arity::kValue, "Build", "spec",
     "Shapes a profile is tuned for; alone, min = opt = max",
     [](ExecOptions& o, const FlagUse& u) { return parse_shape_flag(o.opt_shapes, u); }, true},
    {"--maxShapes", Arity::kValue, "Build", "spec", "Largest shapes of a profile",
     [](ExecOptions& o, const FlagUse& u) { return parse_shape_flag(o.max_shapes, u); }, true},
    {"--disablePasses", Arity::kValue, "Build", "a,b", "kiln: graph passes to skip",
     [](ExecOptions& o, const FlagUse& u) {
       KILN_RETURN_IF_ERROR(split_list(u.name, *u.value).status());
       o.disable_passes = std::string(*u.value);
       return Status::ok();
     }},
    {"--fp16", Arity::kNone, "Build", "",
     "FP16 weights for convolutions and GEMMs (arithmetic stays FP32)", KILN_BOOL_FLAG(fp16)},
    {"--int8", Arity::kNone, "Build", "",
     "Run convolutions and GEMMs in INT8 where a range is known", KILN_BOOL_FLAG(int8)},
    {"--best", Arity::kNone, "Build", "", "Every precision kiln has: --int8 and --fp16",
     KILN_BOOL_FLAG(best)},
    {"--calib", Arity::kValue, "Build", "<file>",
     "INT8 ranges: kiln calibration file or TensorRT cache (else placeholder ranges)",
     KILN_PATH_FLAG(calib)},
    {"--int8WeightBits", Arity::kValue, "Build", "8|7",
     "7: INT8 weights in [-63, 63], which CPUs without VNNI run about 1.3x faster (vpmaddubsw)",
     [](ExecOptions& o, const FlagUse& u) { return set_int(u, o.int8_weight_bits, 7, 8); }},
    {"--layerPrecisions", Arity::kValue, "Build", "l:fp16,...",
     "Per-layer precision (fp32, fp16, int8), one '*' wildcard allowed", parse_layer_precisions},
    {"--precisionConstraints", Arity::kValue, "Build", "none|prefer|obey",
     "none: ignore --layerPrecisions; prefer: warn when unmet; obey: fail",
     parse_precision_constraints},
    {"--timingCacheFile", Arity::kValue, "Build", "<file>",
     "Tactic timing cache, read before and written after the build",
     KILN_PATH_FLAG(timing_cache_file)},
    {"--tacticSources", Arity::kValue, "Build", "+a,-b",
     "Enable/disable tactic sources: kiln, onednn (e.g. -onednn)", parse_tactic_sources},
    {"--builderOptimizationLevel", Arity::kValue, "Build", "0-5",
     "0: no tactic timing; 1-5: time every candidate, more repeats per level (default 3)",
     [](ExecOptions& o, const FlagUse& u) {
       return set_int(u, o.builder_optimization_level, 0, 5);
     }},
    {"--buildBudget", Arity::kValue, "Build", "seconds",
     "kiln: stop timing tactics after this long; later layers take cached times or the "
     "preference order (default: no limit)",
     [](ExecOptions& o, const FlagUse& u) {
       KILN_ASSIGN_OR_RETURN(o.build_budget_s, parse_real(u.name, *u.value));
       if (o.build_budget_s <= 0) {
         return invalid_argument("{}: {} seconds is not positive", u.name, *u.value);
       }
       return Status::ok();
     }},
    {"--memPoolSize", Arity::kValue, "Build", "pool:size",
     "Recorded; kiln has no size-limited pools (its arena is planned exactly). Size in MiB or "
     "with suffix B/K/M/G",
     parse_mem_pool_size},
    // Inference.
    {"--iterations", Arity::kValue, "Inference", "N", "Run at least N timed queries (default 10)",
     [](ExecOptions& o, const FlagUse& u) { return set_int(u, o.iterations, 1, 1'000'000'000); }},
    {"--warmUp", Arity::kValue, "Inference", "ms",
     "Discard the queries started in the first ms (default 200)", parse_warm_up},
    {"--duration", Arity::kValue, "Inference", "s",
     "Time queries for at least s seconds after warm-up (default 3)", parse_duration},
    {"--infStreams", Arity::kValue, "Inference", "N",
     "N execution contexts on N threads, concurrently (default 1)",
     [](ExecOptions& o, const FlagUse& u) { return set_int(u, o.inf_streams, 1, kMaxInfStreams); }},
    {"--threads", Arity::kOptionalValue, "Inference", "N",
     "kiln: threads per stream, the caller included (default: the cores divided among the streams)",
     parse_threads},
    {"--separateProfileRun", Arity::kNone, "Inference", "",
     "Measure the per-layer profile in a second run, so the timed run is undisturbed",
     KILN_BOOL_FLAG(separate_profile_run)},
    {"--loadInputs", Arity::kValue, "Inference", "in:file",
     "Input data: .npy, or raw binary as trtexec (dtype from the model); others random",
     [](ExecOptions& o, const FlagUse& u) {
       KILN_ASSIGN_OR_RETURN(o.load_inputs, parse_named_files(u.name, *u.value));
       return Status::ok();
     }},
    {"--seed", Arity::kValue, "Inference", "S", "kiln: seed of the random inputs (default 0)",
     parse_seed},
    // Throughput search.
    {"--throughputSearch", Arity::kNone, "Inference", "",
     "kiln: benchmark every --batches x 1..--maxStreams and report the most inferences/s within "
     "--latencyBound",
     KILN_BOOL_FLAG(throughput_search)},
    {"--batches", Arity::kValue, "Inference", "B1,B2",
     "kiln: batch sizes (the first dim of dynamic-batch inputs) for --throughputSearch",
     parse_batches},
    {"--maxStreams", Arity::kValue, "Inference", "N",
     "kiln: most concurrent streams --throughputSearch tries (default: the CPUs allowed)",
     [](ExecOptions& o, const FlagUse& u) { return set_int(u, o.max_streams, 1, kMaxInfStreams); }},
    {"--latencyBound", Arity::kValue, "Inference", "ms",
     "kiln: --throughputSearch keeps configurations whose latency at the highest --percentile is "
     "at most ms",
     parse_latency_bound},
    // Reporting.
    {"--avgRuns", Arity::kValue, "Reporting", "N",
     "Queries per line of the trace averages (--verbose; default 10)",
     [](ExecOptions& o, const FlagUse& u) { return set_int(u, o.avg_runs, 1, 1'000'000'000); }},
    {"--percentile", Arity::kValue, "Reporting", "P1,P2",
     "Percentiles in [0, 100] to report (default 90,95,99)", parse_percentiles},
    {"--dumpProfile", Arity::kNone, "Reporting", "", "Print the per-layer profile",
     KILN_BOOL_FLAG(dump_profile)},
    {"--exportProfile", Arity::kValue, "Reporting", "<file>",
     "Write the per-layer profile as JSON (trtexec's shape)", KILN_PATH_FLAG(export_profile)},
    {"--exportTimes", Arity::kValue, "Reporting", "<file>",
     "Write every timed query's times as JSON (trtexec's shape)", KILN_PATH_FLAG(export_times)},
    {"--dumpLayerInfo", Arity::kNone, "Reporting", "", "Print the engine's layers",
     KILN_BOOL_FLAG(dump_layer_info)},
    {"--exportLayerInfo", Arity::kValue, "Reporting", "<file>",
     "Write the engine's layers as JSON (trtexec's shape)", KILN_PATH_FLAG(export_layer_info)},
    {"--profilingVerbosity", Arity::kValue, "Reporting", "layer_names_only|detailed|none",
     "Detail of the layer information (default detailed; trtexec: layer_names_only)",
     parse_profiling_verbosity},
    {"--dumpOutput", Arity::kNone, "Reporting", "", "Print the outputs of the last query",
     KILN_BOOL_FLAG(dump_output)},
    {"--exportOutput", Arity::kValue, "Reporting", "<file>",
     "Write the outputs of the last query as JSON (trtexec's shape)",
     KILN_PATH_FLAG(export_output)},
    {"--exportSummary", Arity::kValue, "Reporting", "<file>",
     "kiln: every figure, the method and the environment as JSON (docs/exec.md)",
     KILN_PATH_FLAG(export_summary)},
    {"--verbose", Arity::kNone, "Reporting", "", "Build log, trace averages, metric explanations",
     KILN_BOOL_FLAG(verbose)},
    {"--help", Arity::kNone, "Reporting", "", "This text", KILN_BOOL_FLAG(help)},
};

#undef KILN_PATH_FLAG
#undef KILN_BOOL_FLAG

constexpr std::string_view kNoGpu = "there is no GPU: kiln runs on the host CPU";
constexpr std::string_view kSync =
    "kiln's execute() is synchronous: the whole engine runs in one call and there is no event to "
    "wait on";
constexpr std::string_view kNoTransfers =
    "inputs and outputs stay in host memory: there are no host/device transfers (H2D and D2H "
    "are reported as 0)";

const NoteFlag kNoteFlags[] = {
    {"--useCudaGraph", Arity::kNone, kSync},
    {"--noCudaGraph", Arity::kNone, kSync},
    {"--useSpinWait", Arity::kNone, kSync},
    {"--noSpinWait", Arity::kNone, kSync},
    {"--noDataTransfers", Arity::kNone, kNoTransfers},
    {"--includeDataTransfers", Arity::kNone, kNoTransfers},
    {"--exposeDMA", Arity::kNone, kNoTransfers},
    {"--useManagedMemory", Arity::kNone, kNoGpu},
    {"--device", Arity::kValue, kNoGpu},
    {"--useDLACore", Arity::kValue, kNoGpu},
    {"--allowGPUFallback", Arity::kNone, kNoGpu},
    {"--persistentCacheRatio", Arity::kValue, kNoGpu},
    {"--maxAuxStreams", Arity::kValue, kNoGpu},
    {"--noTF32", Arity::kNone, "TF32 is a GPU tensor-core format; kiln's fp32 is IEEE fp32"},
    {"--stronglyTyped", Arity::kNone, "kiln keeps the model's types (fp32 engines today)"},
    {"--timeDeserialize", Arity::kNone, "kiln always reports the engine load time"},
};

const UnsupportedFlag kUnsupportedFlags[] = {
    {"--streams", "use --infStreams (trtexec deprecated --streams)"},
    {"--batch", "implicit batch is gone from TensorRT 10; use --shapes"},
    {"--maxBatch", "implicit batch is gone from TensorRT 10; use --minShapes/--maxShapes"},
    {"--bf16", "reduced precision is issue 5"},
    {"--fp8", "reduced precision is issue 5"},
    {"--int4", "reduced precision is issue 5"},
    {"--layerOutputTypes", "reduced precision is issue 5"},
    {"--minShapesCalib", "calibration is issue 5"},
    {"--optShapesCalib", "calibration is issue 5"},
    {"--maxShapesCalib", "calibration is issue 5"},
    {"--inputIOFormats", "kiln engines take row-major tensors in the model's types"},
    {"--outputIOFormats", "kiln engines give row-major tensors in the model's types"},
    {"--sparsity", "no sparse tactics"},
    {"--refit", "engines are not refittable"},
    {"--stripWeights", "engines always hold their weights"},
    {"--versionCompatible", "no lean runtime"},
    {"--useRuntime", "no lean runtime"},
    {"--maxTactics", "tactic search is issue 4"},
    {"--avgTiming", "tactic search is issue 4"},
    {"--noBuilderCache", "tactic search is issue 4"},
    {"--useProfile", "the profile is chosen from the input shapes"},
    {"--allocationStrategy", "the arena is planned per profile"},
    {"--sleepTime", "not implemented"},
    {"--idleTime", "not implemented"},
    {"--dumpRawBindingsToFile", "use --exportOutput"},
    {"--dumpOptimizationProfile", "use kiln inspect"},
    {"--loadRefOutputs", "use kiln run --onnx as the reference"},
    {"--plugins", "no plugins"},
    {"--staticPlugins", "no plugins"},
    {"--dynamicPlugins", "no plugins"},
    {"--profile", "profiles are given by repeating --minShapes/--optShapes/--maxShapes"},
};

}  // namespace

std::span<const FlagDef> flag_table() { return kFlags; }
std::span<const NoteFlag> note_flags() { return kNoteFlags; }
std::span<const UnsupportedFlag> unsupported_flags() { return kUnsupportedFlags; }

}  // namespace kiln::cli::exec
