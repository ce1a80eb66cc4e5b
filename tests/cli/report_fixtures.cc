#include "report_fixtures.h"

#include <fstream>

#include "exec/exports.h"

namespace kiln::testing {

using json = nlohmann::json;

namespace {

json stats(double p50, std::optional<double> p99) {
  return {{"min", p50 * 0.9},
          {"max", p99.value_or(p50) * 1.1},
          {"mean", p50},
          {"median", p50},
          {"stddev", 0.1},
          {"cov_percent", 1.0},
          {"percentiles",
           {{{"percentile", 90.0}, {"ms", p50 * 1.05}},
            {{"percentile", 99.0}, {"ms", p99 ? json(*p99) : json(nullptr)}}}}};
}

json policy() {
  return {{"warmup_ms", 200},         {"min_iterations", 10},
          {"min_duration_s", 3},      {"avg_runs", 10},
          {"percentiles", {90, 99}},  {"warmup_policy", "w"},
          {"stop_rule", "s"},         {"clock", "c"},
          {"percentile_method", "p"}, {"median_method", "m"},
          {"cov_method", "v"},        {"unstable_cov_percent", 1.0}};
}

}  // namespace

json make_summary(const SummarySpec& s) {
  const json latency = stats(s.p50_ms, s.p99_ms);
  return {
      {"schema", cli::exec::kSummarySchema},
      {"schema_version", cli::exec::kSummarySchemaVersion},
      {"source", {{"tool", s.tool}, {"version", "1.0"}, {"log", nullptr}}},
      {"started_at", "2026-11-25T18:07:03Z"},
      {"command", json::array()},
      {"model",
       {{"name", s.model},
        {"batch", s.batch ? json(*s.batch) : json(nullptr)},
        {"onnx", nullptr},
        {"engine", nullptr},
        {"saved_engine", nullptr},
        {"inputs", json::array()},
        {"outputs", json::array()}}},
      {"build",
       {{"import_ms", nullptr},
        {"build_ms", nullptr},
        {"save_ms", nullptr},
        {"load_ms", nullptr},
        {"precision", s.precision},
        {"builder_optimization_level", nullptr}}},
      {"environment",
       {{"cpu", nullptr}, {"os", nullptr}, {"device", "Test CPU"}, {"kiln", nullptr}}},
      {"execution",
       {{"inference_streams", s.streams},
        {"threads_per_stream", s.threads ? json(*s.threads) : json(nullptr)},
        {"cores_used", s.threads ? json(*s.threads * s.streams) : json(nullptr)}}},
      {"policy", policy()},
      {"results",
       {{"warmup_queries", 5},
        {"warmup_end_ms", 200.0},
        {"queries", 100},
        {"queries_per_stream", {100}},
        {"throughput_qps", s.qps},
        {"total_host_walltime_s", 1.0},
        {"total_compute_time_s", 1.0},
        {"latency_ms", latency},
        {"enqueue_ms", nullptr},
        {"compute_ms", latency},
        {"h2d_ms", nullptr},
        {"d2h_ms", nullptr},
        {"end_to_end_ms", nullptr},
        {"stable", true},
        {"warnings", json::array()}}},
      {"profile", nullptr},
      {"throughput_search", nullptr},
  };
}

void write_text_file(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

void write_json_file(const std::filesystem::path& path, const json& j) {
  write_text_file(path, j.dump(2) + "\n");
}

}  // namespace kiln::testing
