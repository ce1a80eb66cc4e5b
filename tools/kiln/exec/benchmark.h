#pragma once
// The timing loop. Each context runs on its own thread (the calling thread when there is one), all
// started together; each records, per query, when execute() was called and when it returned, on
// the steady clock, in ms since the common start.
//
// Policy (trtexec's inferenceLoop): a query that starts within the first warmup_ms is warm-up and
// discarded; each stream then runs until it has at least min_iterations timed queries and at least
// warmup_ms + min_duration_ms have passed since the start. kiln's execute() is synchronous, so a
// query's enqueue and compute intervals are the same interval and there are no host/device
// transfers (docs/exec.md).

#include <span>
#include <vector>

#include "base/status.h"
#include "exec/layer_profiler.h"
#include "exec/statistics.h"
#include "runtime/execution_context.h"

namespace kiln::cli::exec {

struct BenchmarkPolicy {
  int min_iterations = 10;
  double warmup_ms = 200;
  double min_duration_ms = 3000;
};

struct QueryTime {
  double start_ms = 0;  // execute() called
  double end_ms = 0;    // execute() returned
  int stream = 0;
  double ms() const { return end_ms - start_ms; }
};

struct BenchmarkTrace {
  std::vector<QueryTime> warmup;  // every stream's, by start time
  std::vector<QueryTime> timed;   // every stream's, by start time
  int streams = 1;
};

// Runs the contexts (already bound and shaped) concurrently. `profilers` is empty or has one
// profiler per context, attached as the context's layer callback for this run and fed during timed
// queries only. The first failing execute() stops every stream and is returned.
Result<BenchmarkTrace> run_benchmark(std::span<runtime::ExecutionContext* const> contexts,
                                     const BenchmarkPolicy& policy,
                                     std::span<LayerProfiler* const> profilers);

// The figures of a trace; a pure function, tested on hand-made traces.
struct BenchmarkSummary {
  size_t warmup_queries = 0;
  double warmup_end_ms = 0;  // when the last warm-up query returned (0 without warm-up)
  size_t queries = 0;
  std::vector<size_t> queries_per_stream;
  double walltime_ms = 0;  // first timed query's start to the last one's end
  double throughput_qps = 0;
  Stats latency, enqueue, compute;  // ms; equal intervals on kiln's synchronous runtime
  double total_compute_ms = 0;      // sum of compute times
};

BenchmarkSummary summarize(const BenchmarkTrace& trace, std::span<const double> percentiles);

// trtexec's "Average on N runs" lines: the mean of each consecutive block of `runs` queries (by
// start time); an incomplete last block is dropped, as trtexec does.
std::vector<double> block_averages(const std::vector<QueryTime>& timed, int runs);

}  // namespace kiln::cli::exec
