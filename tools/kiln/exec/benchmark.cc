#include "exec/benchmark.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <latch>
#include <mutex>
#include <optional>
#include <thread>

namespace kiln::cli::exec {
namespace {

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

struct StreamState {
  std::vector<QueryTime> warmup, timed;
  Status status;
};

// Shared by the streams: the common start and the first error.
struct Shared {
  Clock::time_point start;
  std::atomic<bool> stop{false};
};

void run_stream(runtime::ExecutionContext& ctx, int stream, const BenchmarkPolicy& policy,
                LayerProfiler* profiler, Shared& shared, StreamState& out) {
  const double end_ms = policy.warmup_ms + policy.min_duration_ms;
  while (!shared.stop.load(std::memory_order_relaxed)) {
    const Clock::time_point t0 = Clock::now();
    const double start_ms = ms_between(shared.start, t0);
    const bool warm = start_ms < policy.warmup_ms;
    if (profiler != nullptr && !warm) profiler->start(t0);
    Status st = ctx.execute();
    const Clock::time_point t1 = Clock::now();
    if (!st) {
      out.status = std::move(st);
      shared.stop = true;
      return;
    }
    if (profiler != nullptr && !warm) profiler->finish();
    const QueryTime q{start_ms, ms_between(shared.start, t1), stream};
    (warm ? out.warmup : out.timed).push_back(q);
    if (static_cast<int>(out.timed.size()) >= policy.min_iterations && q.end_ms >= end_ms) return;
  }
}

std::vector<QueryTime> merge_by_start(std::vector<StreamState>& states, bool warm) {
  std::vector<QueryTime> all;
  for (StreamState& s : states) {
    auto& v = warm ? s.warmup : s.timed;
    all.insert(all.end(), v.begin(), v.end());
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const QueryTime& a, const QueryTime& b) { return a.start_ms < b.start_ms; });
  return all;
}

}  // namespace

Result<BenchmarkTrace> run_benchmark(std::span<runtime::ExecutionContext* const> contexts,
                                     const BenchmarkPolicy& policy,
                                     std::span<LayerProfiler* const> profilers) {
  const size_t n = contexts.size();
  if (n == 0) return invalid_argument("run_benchmark: no execution context");
  if (!profilers.empty() && profilers.size() != n) {
    return internal_error("run_benchmark: {} profilers for {} contexts", profilers.size(), n);
  }
  std::vector<StreamState> states(n);
  Shared shared;
  auto profiler = [&](size_t i) { return profilers.empty() ? nullptr : profilers[i]; };
  for (size_t i = 0; i < n && !profilers.empty(); ++i) {
    contexts[i]->set_layer_callback([p = profilers[i]](size_t node) { p->on_layer(node); });
  }
  if (n == 1) {
    shared.start = Clock::now();
    run_stream(*contexts[0], 0, policy, profiler(0), shared, states[0]);
  } else {
    // Every thread waits at the latch, so no stream starts before the others exist; the start
    // time is written before the main thread arrives, which the latch orders before any read.
    std::latch ready(static_cast<std::ptrdiff_t>(n + 1));
    std::vector<std::jthread> threads;
    threads.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      threads.emplace_back([&, i] {
        ready.arrive_and_wait();
        run_stream(*contexts[i], static_cast<int>(i), policy, profiler(i), shared, states[i]);
      });
    }
    shared.start = Clock::now();
    ready.arrive_and_wait();
    threads.clear();  // joins
  }
  for (size_t i = 0; i < n && !profilers.empty(); ++i) contexts[i]->set_layer_callback(nullptr);
  for (size_t i = 0; i < n; ++i) {
    if (!states[i].status) {
      return n == 1 ? states[i].status : states[i].status.with_context(fmt::format("stream {}", i));
    }
  }
  BenchmarkTrace trace;
  trace.streams = static_cast<int>(n);
  trace.warmup = merge_by_start(states, true);
  trace.timed = merge_by_start(states, false);
  return trace;
}

BenchmarkSummary summarize(const BenchmarkTrace& trace, std::span<const double> percentiles) {
  BenchmarkSummary s;
  s.warmup_queries = trace.warmup.size();
  for (const QueryTime& q : trace.warmup) s.warmup_end_ms = std::max(s.warmup_end_ms, q.end_ms);
  s.queries = trace.timed.size();
  s.queries_per_stream.assign(static_cast<size_t>(std::max(trace.streams, 1)), 0);
  std::vector<double> times;
  times.reserve(trace.timed.size());
  double first = 0, last = 0;
  for (const QueryTime& q : trace.timed) {
    if (q.stream >= 0 && static_cast<size_t>(q.stream) < s.queries_per_stream.size()) {
      ++s.queries_per_stream[static_cast<size_t>(q.stream)];
    }
    first = times.empty() ? q.start_ms : std::min(first, q.start_ms);
    last = times.empty() ? q.end_ms : std::max(last, q.end_ms);
    times.push_back(q.ms());
  }
  s.walltime_ms = last - first;
  s.throughput_qps = s.walltime_ms > 0 ? static_cast<double>(s.queries) / s.walltime_ms * 1000 : 0;
  s.compute = compute_stats(times, percentiles);
  s.latency = s.compute;
  s.enqueue = s.compute;
  s.total_compute_ms = s.compute.sum;
  return s;
}

std::vector<double> block_averages(const std::vector<QueryTime>& timed, int runs) {
  std::vector<double> out;
  if (runs < 1) return out;
  double sum = 0;
  int count = 0;
  for (const QueryTime& q : timed) {
    sum += q.ms();
    if (++count == runs) {
      out.push_back(sum / runs);
      sum = 0;
      count = 0;
    }
  }
  return out;
}

}  // namespace kiln::cli::exec
