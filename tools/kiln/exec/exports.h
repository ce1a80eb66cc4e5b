#pragma once
// The JSON files of `kiln exec`. --exportTimes, --exportProfile and --exportLayerInfo have
// trtexec's shapes (sampleReporting.cpp, IEngineInspector); --exportSummary is kiln's versioned
// schema, specified in docs/exec.md. Builders are pure; writers write atomically.

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/plan.h"
#include "engine/shape_resolver.h"
#include "exec/benchmark.h"
#include "exec/environment.h"
#include "exec/exec_options.h"
#include "exec/layer_profiler.h"
#include "exec/throughput_search.h"

namespace kiln::cli::exec {

inline constexpr const char* kSummarySchema = "kiln.exec.summary";
inline constexpr int kSummarySchemaVersion = 4;

// [{"startEnqMs": .., "endEnqMs": .., "startH2dMs", "endH2dMs", "startComputeMs", "endComputeMs",
//   "startD2hMs", "endD2hMs", "h2dMs", "computeMs", "d2hMs", "latencyMs"}, ...], timed queries
// only, by start time, in ms since the benchmark started.
nlohmann::ordered_json times_json(const std::vector<QueryTime>& timed);

// [{"count": N}, {"name", "timeMs", "averageMs", "medianMs", "percentage"}, ...]
nlohmann::ordered_json profile_json(const ProfileReport& report,
                                    const std::vector<std::string>& names);

// {"Layers": [...], "Bindings": [...]}. Dims come from `shapes` (the inference shapes) when
// given, else from the model with -1 for dynamic dims. kLayerNamesOnly lists names only.
nlohmann::ordered_json layer_info_json(const engine::Plan& plan,
                                       const engine::ResolvedShapes* shapes,
                                       ProfilingVerbosity verbosity);

struct TensorInfo {
  std::string name;
  std::string dtype;
  Dims dims;
};

// Everything --exportSummary records about one run.
struct RunRecord {
  const ExecOptions* options = nullptr;
  Environment environment;
  std::string started_at;  // UTC, ISO 8601
  std::optional<double> import_ms, build_ms, save_ms, load_ms;
  std::string precision = "fp32";
  std::vector<TensorInfo> inputs, outputs;
  int streams = 1;  // of the reported run: --infStreams, or the search's best
  BenchmarkSummary summary;
  std::vector<std::string> warnings;
  std::optional<SearchResult> search;  // --throughputSearch
  std::optional<ProfileReport> profile;
  std::string profile_source;  // "separate profiling run" or "timed run"
  std::vector<std::string> layer_names;
};

nlohmann::ordered_json summary_json(const RunRecord& record);

// Writes `j` atomically: arrays one element per line (trtexec's layout), objects indented.
Status write_json(const std::filesystem::path& path, const nlohmann::ordered_json& j);

}  // namespace kiln::cli::exec
