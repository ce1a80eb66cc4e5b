#pragma once
// --throughputSearch: benchmark each batch size of --batches with 1, 2, ... --maxStreams
// concurrent streams, under the same warm-up and iteration policy as a normal run, and pick the
// configuration with the most inferences per second (queries/s x batch) whose latency at the
// highest --percentile is within --latencyBound. For a batch, streams stop being added once the
// bound is exceeded: more streams only add contention.

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/builder.h"
#include "exec/benchmark.h"
#include "exec/exec_log.h"
#include "exec/exec_options.h"
#include "ir/graph.h"
#include "runtime/engine.h"

namespace kiln::cli::exec {

struct SearchCandidate {
  int64_t batch = 1;  // first dim of the dynamic-batch inputs (1 when the model has none)
  int streams = 1;
  BenchmarkSummary summary;
  double latency_ms = 0;        // compute time at the search percentile
  double inferences_per_s = 0;  // throughput_qps * batch
  bool within_bound = true;
};

struct SearchResult {
  double percentile = 99;  // the highest --percentile
  double bound_ms = 0;     // 0: none
  std::vector<SearchCandidate> candidates;
  std::optional<size_t> best;
  BenchmarkTrace best_trace;
};

// The candidate with the most inferences/s among those within the bound; ties go to fewer streams,
// then to the smaller batch. nullopt when none is within the bound.
std::optional<size_t> pick_best(const std::vector<SearchCandidate>& candidates);

// The build profile of a search with --onnx: inputs whose first dim is dynamic range over the
// batches (opt = the largest); their other dims come from --shapes, else the model (dynamic ones
// 1). InvalidArgument when --batches is given but no input has a dynamic first dim.
Result<engine::ProfileSpec> search_profile(const ir::Graph& graph, const ExecOptions& o);

// --shapes with the first dim of every dynamic-batch input set to `batch`.
std::map<std::string, Dims> search_input_shapes(const runtime::Engine& engine, const ExecOptions& o,
                                                int64_t batch);

// Runs the search; `max_streams` is --maxStreams or its default.
Result<SearchResult> run_throughput_search(const runtime::Engine& engine, const ExecOptions& o,
                                           int max_streams, ExecLog& log);

// "=== Throughput search ===" table, one line per candidate, and the verdict.
std::vector<std::string> search_lines(const SearchResult& r);

}  // namespace kiln::cli::exec
