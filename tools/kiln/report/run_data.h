#pragma once
// What kiln report knows about one benchmark run: the figures of one summary file (schema
// kiln.exec.summary, docs/exec.md) that a report shows, plus what the folder around it adds (the
// engine file's size and activation arena, a per-layer profile exported next to it).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln::cli::report {

struct LayerTime {
  std::string name;
  double average_ms = 0;  // per query
  double percent = 0;     // of the profiled total
};

// One layer's error against the reference (accuracy.layers in the summary).
struct LayerError {
  std::string name;
  std::optional<double> rel_err;      // ||x - ref||2 / ||ref||2
  std::optional<double> max_abs_err;  // max |x - ref|
  std::optional<double> sqnr_db;      // 10 log10(||ref||^2 / ||x - ref||^2)
};

// The summary's optional `accuracy` object (schema version 3; docs/report.md).
struct Accuracy {
  std::string reference;  // what the outputs were compared with
  std::optional<int64_t> samples;
  std::string metric;  // e.g. "top1_percent"; "" when none
  std::optional<double> value, reference_value, delta, max_abs_err;
  std::vector<LayerError> layers;
};

struct Run {
  std::string file;        // the summary, relative to the report's folder
  std::string backend;     // source.tool, "kiln exec" read as "kiln"
  std::string version;     // source.version
  std::string device;      // environment.device
  std::string started_at;  // as recorded
  std::string model;       // model.name; "(unnamed)" when null
  std::string precision;   // build.precision; "unknown" when null
  std::optional<int64_t> batch;
  int streams = 1;
  std::optional<int64_t> threads;  // per stream
  std::optional<double> p50_ms, p99_ms;
  double throughput_qps = 0;
  std::optional<int64_t> queries;
  std::optional<bool> stable;
  std::vector<std::string> profile_exports;  // --exportProfile values of its command
  std::string engine;                        // model.saved_engine or model.engine, as recorded
  std::optional<int64_t> engine_bytes, activation_bytes;
  std::optional<Accuracy> accuracy;
  std::vector<LayerTime> layers;  // the per-layer profile, in execution order
  std::string profile_from;       // "the summary" or the profile file's name

  // Inferences per second: queries per second times the batch (1 when not recorded).
  double inferences_per_s() const {
    return throughput_qps * static_cast<double>(batch.value_or(1));
  }
};

}  // namespace kiln::cli::report
