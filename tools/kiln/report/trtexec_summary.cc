#include "report/trtexec_summary.h"

#include <charconv>
#include <filesystem>
#include <map>
#include <optional>
#include <string_view>

#include "exec/exports.h"

namespace kiln::cli::report {
namespace {

using ojson = nlohmann::ordered_json;

// trtexec's flags as the banner recorded them: --name=value, or --name alone.
class CommandFlags {
 public:
  explicit CommandFlags(const std::vector<std::string>& args) {
    for (const std::string& a : args) {
      if (a.rfind("--", 0) != 0) continue;
      const size_t eq = a.find('=');
      values_[a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2)] =
          eq == std::string::npos ? "" : a.substr(eq + 1);
    }
  }
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  ojson text(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() || it->second.empty() ? ojson(nullptr) : ojson(it->second);
  }
  // The flag's number, `fallback` when absent; an error naming the flag when it is no number.
  Result<double> number(const std::string& name, double fallback) const {
    auto it = values_.find(name);
    if (it == values_.end()) return fallback;
    double v = 0;
    const std::string& s = it->second;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size()) {
      return invalid_argument("the log's command line has --{}={}, which is not a number", name, s);
    }
    return v;
  }

 private:
  std::map<std::string, std::string> values_;
};

// The positive number `dims` starts with, up to its end or an 'x' ("8", "8x3x224x224").
std::optional<int64_t> leading_dim(std::string_view dims) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(dims.data(), dims.data() + dims.size(), v);
  if (ec != std::errc() || v < 1 || (end != dims.data() + dims.size() && *end != 'x')) {
    return std::nullopt;
  }
  return v;
}

// The leading dim of the first tensor of a --shapes value ("input:8x3x224x224,mask:8x128").
std::optional<int64_t> batch_of_shapes(std::string_view shapes) {
  const std::string_view first = shapes.substr(0, shapes.find(','));
  const size_t colon = first.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  return leading_dim(first.substr(colon + 1));
}

ojson batch_json(const CommandFlags& flags, const TrtexecImportOptions& o) {
  std::optional<int64_t> batch;
  if (const ojson b = flags.text("batch"); b.is_string()) batch = leading_dim(b.get<std::string>());
  for (const char* name : {"shapes", "optShapes"}) {
    if (const ojson s = flags.text(name); !batch && s.is_string()) {
      batch = batch_of_shapes(s.get<std::string>());
    }
  }
  if (!batch) batch = o.batch;
  return batch ? ojson(*batch) : ojson(nullptr);
}

ojson precision_json(const TrtexecLog& log, const CommandFlags& flags,
                    const TrtexecImportOptions& o) {
  if (log.command.empty()) return o.precision.empty() ? ojson(nullptr) : ojson(o.precision);
  if (flags.has("best")) return "best";
  if (flags.has("int8") && flags.has("fp16")) return "int8+fp16";
  for (const char* p : {"int8", "fp16", "bf16", "fp8", "int4"}) {
    if (flags.has(p)) return p;
  }
  if (flags.has("stronglyTyped")) return "strongly typed";
  return "fp32";
}

ojson model_json(const TrtexecLog& log, const CommandFlags& flags, const TrtexecImportOptions& o) {
  ojson name = nullptr;
  for (const char* f : {"onnx", "loadEngine", "uff", "model", "saveEngine"}) {
    const ojson file = flags.text(f);
    if (file.is_string()) {
      name = std::filesystem::path(file.get<std::string>()).stem().string();
      break;
    }
  }
  if (name.is_null() && !o.model.empty()) name = o.model;
  return {{"name", std::move(name)},
          {"batch", batch_json(flags, o)},
          {"onnx", flags.text("onnx")},
          {"engine", flags.text("loadEngine")},
          {"saved_engine", flags.text("saveEngine")},
          {"inputs", ojson::array()},
          {"outputs", ojson::array()}};
}

ojson optional_number(const std::optional<double>& v, double scale = 1) {
  return v ? ojson(*v * scale) : ojson(nullptr);
}

ojson stats_json(const std::optional<TrtexecStats>& s, std::optional<double> cov = std::nullopt) {
  if (!s) return nullptr;
  ojson p = ojson::array();
  for (const TrtexecStats::Percentile& q : s->percentiles) {
    p.push_back({{"percentile", q.percentile}, {"ms", optional_number(q.ms)}});
  }
  return {{"min", optional_number(s->min)},
          {"max", optional_number(s->max)},
          {"mean", optional_number(s->mean)},
          {"median", optional_number(s->median)},
          {"stddev", nullptr},
          {"cov_percent", optional_number(cov)},
          {"percentiles", std::move(p)}};
}

Result<ojson> policy_json(const TrtexecLog& log, const CommandFlags& flags) {
  KILN_ASSIGN_OR_RETURN(double warmup, flags.number("warmUp", 200));
  KILN_ASSIGN_OR_RETURN(double iterations, flags.number("iterations", 10));
  KILN_ASSIGN_OR_RETURN(double duration, flags.number("duration", 3));
  KILN_ASSIGN_OR_RETURN(double avg_runs, flags.number("avgRuns", 10));
  ojson percentiles = ojson::array();
  for (const TrtexecStats::Percentile& q : log.latency->percentiles) {
    percentiles.push_back(q.percentile);
  }
  return ojson{
      {"warmup_ms", warmup},
      {"min_iterations", static_cast<int64_t>(iterations)},
      {"min_duration_s", duration},
      {"avg_runs", static_cast<int64_t>(avg_runs)},
      {"percentiles", std::move(percentiles)},
      {"warmup_policy", "trtexec: queries during --warmUp ms are run and discarded"},
      {"stop_rule", "trtexec: at least --iterations queries and --duration seconds"},
      {"clock", "trtexec: CUDA events for GPU compute, host clock for latency"},
      {"percentile_method",
       "trtexec nearest rank: sorted[max(N - 1 - floor((1 - p/100) N), 0)], no interpolation"},
      {"median_method", "middle value; mean of the two middle values when N is even"},
      {"cov_method", "trtexec: GPU compute time standard deviation / mean * 100"},
      {"unstable_cov_percent", 2.5},
  };
}

ojson results_json(const TrtexecLog& log, int64_t streams) {
  ojson per_stream = log.queries && streams == 1 ? ojson::array({*log.queries}) : ojson(nullptr);
  // trtexec warns when GPU compute time's CoV exceeds 2.5 %: its absence means stable.
  const bool unstable = log.compute_cov_percent.has_value();
  return {{"warmup_queries", log.warmup_queries ? ojson(*log.warmup_queries) : ojson(nullptr)},
          {"warmup_end_ms", optional_number(log.warmup_ms)},
          {"queries", log.queries ? ojson(*log.queries) : ojson(nullptr)},
          {"queries_per_stream", std::move(per_stream)},
          {"throughput_qps", log.throughput_qps.value_or(0)},
          {"total_host_walltime_s", optional_number(log.host_walltime_s)},
          {"total_compute_time_s", optional_number(log.compute_time_s)},
          {"latency_ms", stats_json(log.latency)},
          {"enqueue_ms", stats_json(log.enqueue)},
          {"compute_ms", stats_json(log.compute, log.compute_cov_percent)},
          {"h2d_ms", stats_json(log.h2d)},
          {"d2h_ms", stats_json(log.d2h)},
          {"end_to_end_ms", stats_json(log.end_to_end)},
          {"stable", log.format == "legacy" ? ojson(nullptr) : ojson(!unstable)},
          {"warnings", log.warnings}};
}

}  // namespace

Result<ojson> trtexec_summary_json(const TrtexecLog& log, const TrtexecImportOptions& options) {
  const CommandFlags flags(log.command);
  KILN_ASSIGN_OR_RETURN(ojson policy, policy_json(log, flags));
  KILN_ASSIGN_OR_RETURN(double streams_flag, flags.number("streams", 1));
  KILN_ASSIGN_OR_RETURN(double inf_streams, flags.number("infStreams", streams_flag));
  KILN_ASSIGN_OR_RETURN(double level, flags.number("builderOptimizationLevel", -1));
  const auto streams = static_cast<int64_t>(inf_streams);
  return ojson{
      {"schema", exec::kSummarySchema},
      {"schema_version", exec::kSummarySchemaVersion},
      {"source",
       {{"tool", "trtexec"},
        {"version", log.tensorrt_version.empty() ? ojson(nullptr) : ojson(log.tensorrt_version)},
        {"log", options.log_path.empty() ? ojson(nullptr) : ojson(options.log_path)}}},
      {"started_at", log.started_at.empty() ? ojson(nullptr) : ojson(log.started_at)},
      {"command", log.command},
      {"model", model_json(log, flags, options)},
      {"build",
       {{"import_ms", nullptr},
        {"build_ms", optional_number(log.build_s, 1000)},
        {"save_ms", nullptr},
        {"load_ms", optional_number(log.load_s, 1000)},
        {"precision", precision_json(log, flags, options)},
        {"builder_optimization_level",
         level < 0 ? ojson(nullptr) : ojson(static_cast<int64_t>(level))}}},
      {"environment",
       {{"cpu", nullptr},
        {"os", nullptr},
        {"device", log.device.empty() ? ojson(nullptr) : ojson(log.device)},
        {"kiln", nullptr}}},
      {"execution",
       {{"inference_streams", streams}, {"threads_per_stream", nullptr}, {"cores_used", nullptr}}},
      {"policy", std::move(policy)},
      {"results", results_json(log, streams)},
      {"profile", nullptr},
      {"throughput_search", nullptr},
  };
}

}  // namespace kiln::cli::report
