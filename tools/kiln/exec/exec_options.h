#pragma once
// `kiln exec` options: trtexec's flags (--flag=value), defaults and rules, plus kiln's own. Every
// flag is declared once in a table (options.cc) with its parser and validator; cross-flag rules are
// checked in one function after all flags are read. Flags of trtexec that have no meaning on a CPU
// are accepted with a one-line note; trtexec flags kiln does not implement, and flags whose feature
// comes with a later milestone, are Unsupported errors naming the flag.

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/tensor.h"
#include "engine/builder.h"

namespace kiln::cli::exec {

// trtexec's defaults (samples/common/sampleOptions.h).
inline constexpr int kDefaultIterations = 10;
inline constexpr double kDefaultWarmUpMs = 200;
inline constexpr double kDefaultDurationS = 3;
inline constexpr int kDefaultAvgRuns = 10;
inline constexpr int kDefaultBuilderOptimizationLevel = 3;
inline constexpr int kMaxInfStreams = 256;

enum class ProfilingVerbosity { kLayerNamesOnly, kDetailed, kNone };

struct ExecOptions {
  // Model and engine.
  std::string onnx;                                             // --onnx
  std::string load_engine;                                      // --loadEngine
  std::string save_engine;                                      // --saveEngine
  bool skip_inference = false;                                  // --skipInference
  std::string shapes;                                           // --shapes, as given
  std::vector<std::string> min_shapes, opt_shapes, max_shapes;  // one per profile, as given
  std::string disable_passes;                                   // --disablePasses (kiln)
  // Derived: the build profiles (with --onnx) and the inference shapes (--shapes).
  std::vector<engine::ProfileSpec> profiles;
  std::map<std::string, Dims> inference_shapes;

  // Precision (tools/kiln/precision_flags.h applies them to the build).
  bool fp16 = false, int8 = false, best = false;
  int int8_weight_bits = 8;
  std::string calib;
  std::map<std::string, std::string> layer_precisions;
  std::string precision_constraints = "none";
  std::string timing_cache_file;
  std::vector<std::string> tactic_sources;  // "+name" / "-name"
  int builder_optimization_level = kDefaultBuilderOptimizationLevel;
  double build_budget_s = 0;                   // 0: no limit
  std::map<std::string, double> mem_pool_mib;  // recorded only

  // Inference.
  int iterations = kDefaultIterations;
  double warmup_ms = kDefaultWarmUpMs;
  double duration_s = kDefaultDurationS;
  int inf_streams = 1;
  int threads = 0;  // threads per context; 0 until validate(): the cores divided among the streams
  bool separate_profile_run = false;
  std::map<std::string, std::string> load_inputs;  // input name -> .npy or raw file
  uint64_t seed = 0;                               // random inputs (kiln)

  // Throughput search (kiln): the batch and stream count with the most inferences per second whose
  // latency at the highest --percentile stays within latency_bound_ms (0: no bound).
  bool throughput_search = false;
  std::vector<int64_t> batches;  // empty: the batch of --shapes (or the profile's opt)
  int max_streams = 0;           // 0: the CPUs this process may use
  double latency_bound_ms = 0;

  // Reporting.
  int avg_runs = kDefaultAvgRuns;
  std::vector<double> percentiles = {90, 95, 99};
  bool dump_profile = false, dump_layer_info = false, dump_output = false, verbose = false;
  std::string export_times, export_profile, export_layer_info, export_output, export_summary;
  ProfilingVerbosity profiling_verbosity = ProfilingVerbosity::kDetailed;

  bool help = false;
  std::vector<std::string> notes;  // one line per accepted flag that changes nothing on a CPU
  std::vector<std::string> args;   // the arguments after "exec", as given

  bool wants_profile() const { return dump_profile || !export_profile.empty(); }
};

// Parses and validates the arguments that follow "kiln exec". InvalidArgument for a bad value, an
// unknown flag (with the closest known flag) or conflicting flags; Unsupported for a flag whose
// feature kiln does not have (yet).
Result<ExecOptions> parse_exec_args(std::span<const std::string> args);

// "1,4,8" -> {1, 4, 8} sorted; each in [1, 2^20], none twice.
Result<std::vector<int64_t>> parse_batch_list(std::string_view flag, std::string_view value);

// The --help text: every flag with its default and its trtexec compatibility.
std::string exec_help();

// The known flag closest to `flag` (case-insensitive edit distance), or "" when none is close.
std::string closest_flag(std::string_view flag);

// Levenshtein distance, case-insensitive.
size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace kiln::cli::exec
