#pragma once
// Per-layer times from ExecutionContext's layer callback, which runs after each layer: a layer's
// time is the steady-clock time since the previous callback (or since the query started, for the
// first layer). The callback itself costs a clock read and a store per layer, which is why the
// timed run can be kept free of it (--separateProfileRun).
//
// One profiler per context (contexts run on different threads); merge() adds them up.

#include <chrono>
#include <cstddef>
#include <vector>

namespace kiln::cli::exec {

using Clock = std::chrono::steady_clock;

struct ProfileRow {
  size_t node = 0;  // layer index in the plan (graph.nodes)
  double total_ms = 0, average_ms = 0, median_ms = 0, percent = 0;
};

struct ProfileReport {
  size_t iterations = 0;
  std::vector<ProfileRow> rows;  // in execution order
  ProfileRow total;              // node unused; median is the median of per-query totals
};

class LayerProfiler {
 public:
  explicit LayerProfiler(size_t num_nodes) : slot_(num_nodes, -1) {}

  // A profiled query starts at `t`; layer callbacks until finish() are recorded.
  void start(Clock::time_point t) {
    last_ = t;
    armed_ = true;
    query_ms_ = 0;
  }
  void on_layer(size_t node);
  // The query completed: counts it.
  void finish();

  void merge(const LayerProfiler& other);
  size_t iterations() const { return iterations_; }
  ProfileReport report() const;

 private:
  std::vector<int> slot_;                   // per node: index into order_/times_, -1 if not seen
  std::vector<size_t> order_;               // nodes in the order they first ran
  std::vector<std::vector<double>> times_;  // per slot: one time per profiled query, ms
  std::vector<double> query_totals_;        // per profiled query: sum of its layers, ms
  size_t iterations_ = 0;
  Clock::time_point last_;
  double query_ms_ = 0;
  bool armed_ = false;
};

}  // namespace kiln::cli::exec
