#pragma once
// Groups runs into report rows and computes the comparisons. A row is one configuration: model ×
// precision × batch × streams × threads per stream × backend; runs of the same configuration
// (repeats, several folders) are combined by the median. Speed-ups compare p50 latencies:
//   over FP32:  the same backend's fp32 row's p50 / this row's p50 (> 1: faster than fp32);
//   over a peer: the peer's p50 / the reference backend's p50, in the same cell (model, precision,
//                batch, streams, threads), or, when the peer did not record its threads (a
//                trtexec log), in the cell with the same model, precision, batch and streams.
// The reference backend is kiln when present, else the first backend in order.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/run_data.h"

namespace kiln::cli::report {

struct RowKey {
  std::string model, precision;
  std::optional<int64_t> batch;
  int streams = 1;
  std::optional<int64_t> threads;
  std::string backend;
};

struct Row {
  RowKey key;
  std::vector<const Run*> runs;  // at least one
  std::optional<double> p50_ms, p99_ms;
  double inferences_per_s = 0;
  std::optional<double> speedup_vs_fp32;
  std::optional<int64_t> engine_bytes, activation_bytes;
  const Accuracy* accuracy = nullptr;  // the first run's that has one
  const Run* profiled = nullptr;       // the first run with a per-layer profile
};

// A cell of the peer comparison: one configuration, every backend's p50 and the speed-ups.
struct PeerCell {
  const Row* reference = nullptr;
  std::map<std::string, const Row*> peer_rows;           // by backend
  std::map<std::string, std::optional<double>> speedup;  // peer p50 / reference p50
};

struct ReportModel {
  std::vector<Row> rows;              // ordered: model, precision, batch, streams, threads, backend
  std::vector<std::string> models;    // in row order
  std::vector<std::string> backends;  // kiln first, then trtexec, then by name
  std::string reference;              // the backend the peers are compared with
  std::vector<std::string> peers;     // the other backends
  std::vector<PeerCell> peer_cells;   // one per reference row
  bool threads_vary = false;          // rows differ in streams or threads
};

// `runs` must outlive the model (rows point into it).
ReportModel build_report_model(const std::vector<Run>& runs);

// Sort rank of a precision: fp32 first, then tf32, bf16, fp16, fp8, int8, others by name.
int precision_rank(const std::string& precision);

// The median of `values` (mean of the middle two when even); nullopt when empty.
std::optional<double> median(std::vector<double> values);

}  // namespace kiln::cli::report
