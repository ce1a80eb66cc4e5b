#include "exec/exports.h"

#include <fmt/format.h>

#include "exec/report.h"
#include "io/file_util.h"

namespace kiln::cli::exec {

using json = nlohmann::ordered_json;

namespace {

// TensorRT's "Format/Datatype" wording for a row-major tensor.
std::string format_datatype(DType t) {
  switch (t) {
    case DType::kF32:
      return "Row major linear FP32";
    case DType::kF16:
      return "Row major linear FP16";
    case DType::kBF16:
      return "Row major linear BF16";
    default:
      return fmt::format("Row major linear {}", dtype_name(t));
  }
}

json dims_json(const engine::Plan& plan, const engine::ResolvedShapes* shapes, ir::ValueId v) {
  const auto idx = static_cast<size_t>(v);
  if (shapes != nullptr && idx < shapes->dims.size() && shapes->dims[idx]) {
    return *shapes->dims[idx];
  }
  json dims = json::array();
  const ir::TensorDesc& desc = plan.graph.value(v).desc;
  if (!desc.shape) return dims;
  for (const ir::Dim& d : *desc.shape) dims.push_back(d.is_known() ? d.value : -1);
  return dims;
}

json tensors_json(const engine::Plan& plan, const engine::ResolvedShapes* shapes,
                  const std::vector<ir::ValueId>& ids) {
  json out = json::array();
  for (ir::ValueId v : ids) {
    if (v == ir::kNoValue || plan.graph.value(v).constant()) continue;
    const ir::Value& val = plan.graph.value(v);
    out.push_back({{"Name", val.name},
                   {"Location", "Host"},
                   {"Dimensions", dims_json(plan, shapes, v)},
                   {"Format/Datatype", format_datatype(val.desc.dtype)}});
  }
  return out;
}

json attribute_json(const ir::AttrValue& a) {
  if (const Tensor* t = std::get_if<Tensor>(&a)) return t->desc();
  return std::visit(
      [](const auto& v) -> json {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, Tensor>) {
          return nullptr;
        } else {
          return v;
        }
      },
      a);
}

json layer_json(const engine::Plan& plan, const engine::ResolvedShapes* shapes, size_t n) {
  const ir::Node& node = plan.graph.nodes[n];
  const engine::Layer& layer = plan.layers[n];
  int64_t weight_bytes = 0;
  for (ir::ValueId v : node.inputs) {
    if (v != ir::kNoValue && plan.graph.value(v).constant()) {
      weight_bytes += static_cast<int64_t>(plan.graph.value(v).constant()->nbytes());
    }
  }
  json attrs = json::object();
  for (const auto& [name, value] : node.attrs.all()) attrs[name] = attribute_json(value);
  const bool shape_layer = layer.kind == engine::LayerKind::kShape;
  return {{"Name", node.name},
          {"LayerType", node.domain.empty() ? node.op_type : node.domain + "." + node.op_type},
          {"Inputs", tensors_json(plan, shapes, node.inputs)},
          {"Outputs", tensors_json(plan, shapes, node.outputs)},
          {"TacticName", shape_layer ? "shape" : layer.tactic},
          {"Precision", layer.precision},
          {"Kind", shape_layer ? "shape" : "run"},
          {"OnnxNodes", node.origins()},
          {"Attributes", std::move(attrs)},
          {"WeightBytes", weight_bytes}};
}

json stats_json(const Stats& s, std::span<const double> percentiles) {
  json p = json::array();
  for (size_t i = 0; i < percentiles.size() && i < s.percentiles.size(); ++i) {
    p.push_back({{"percentile", percentiles[i]}, {"ms", s.percentiles[i]}});
  }
  return {{"min", s.min},
          {"max", s.max},
          {"mean", s.mean},
          {"median", s.median},
          {"stddev", s.stddev},
          {"cov_percent", s.cov_percent},
          {"percentiles", std::move(p)}};
}

json tensors_info_json(const std::vector<TensorInfo>& tensors) {
  json out = json::array();
  for (const TensorInfo& t : tensors) {
    out.push_back({{"name", t.name}, {"dtype", t.dtype}, {"dims", t.dims}});
  }
  return out;
}

json optional_ms(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json policy_json(const ExecOptions& o) {
  return {
      {"warmup_ms", o.warmup_ms},
      {"min_iterations", o.iterations},
      {"min_duration_s", o.duration_s},
      {"avg_runs", o.avg_runs},
      {"percentiles", o.percentiles},
      {"warmup_policy",
       "queries that start within warmup_ms of the benchmark start are run and discarded"},
      {"stop_rule",
       "each stream runs until it has min_iterations timed queries and warmup_ms + min_duration_s "
       "have passed"},
      {"clock", "std::chrono::steady_clock, per query around execute()"},
      {"percentile_method",
       "trtexec nearest rank: sorted[max(N - 1 - floor((1 - p/100) N), 0)], exact (p to 6 "
       "decimals), no interpolation"},
      {"median_method", "middle value; mean of the two middle values when N is even"},
      {"cov_method", "population standard deviation / mean * 100"},
      {"unstable_cov_percent", kUnstableCovPercent},
  };
}

json profile_section(const RunRecord& r) {
  if (!r.profile) return nullptr;
  json layers = profile_json(*r.profile, r.layer_names);
  layers.erase(layers.begin());  // the {"count": N} header has its own key here
  return {{"source", r.profile_source},
          {"iterations", r.profile->iterations},
          {"total_ms", r.profile->total.total_ms},
          {"average_ms", r.profile->total.average_ms},
          {"median_ms", r.profile->total.median_ms},
          {"layers", std::move(layers)}};
}

json search_json(const RunRecord& r) {
  if (!r.search) return nullptr;
  const SearchResult& s = *r.search;
  json candidates = json::array();
  for (const SearchCandidate& c : s.candidates) {
    candidates.push_back({{"batch", c.batch},
                          {"streams", c.streams},
                          {"throughput_qps", c.summary.throughput_qps},
                          {"inferences_per_s", c.inferences_per_s},
                          {"latency_ms", c.latency_ms},
                          {"within_bound", c.within_bound}});
  }
  json best = nullptr;
  if (s.best) {
    best = {{"batch", s.candidates[*s.best].batch}, {"streams", s.candidates[*s.best].streams}};
  }
  return {{"percentile", s.percentile},
          {"latency_bound_ms", s.bound_ms > 0 ? json(s.bound_ms) : json(nullptr)},
          {"candidates", std::move(candidates)},
          {"best", std::move(best)}};
}

json results_json(const RunRecord& r) {
  const BenchmarkSummary& s = r.summary;
  const std::vector<double>& p = r.options->percentiles;
  return {{"warmup_queries", s.warmup_queries},
          {"warmup_end_ms", s.warmup_end_ms},
          {"queries", s.queries},
          {"queries_per_stream", s.queries_per_stream},
          {"throughput_qps", s.throughput_qps},
          {"total_host_walltime_s", s.walltime_ms / 1000},
          {"total_compute_time_s", s.total_compute_ms / 1000},
          {"latency_ms", stats_json(s.latency, p)},
          {"enqueue_ms", stats_json(s.enqueue, p)},
          {"compute_ms", stats_json(s.compute, p)},
          {"h2d_ms", nullptr},
          {"d2h_ms", nullptr},
          {"end_to_end_ms", nullptr},
          {"stable", s.compute.cov_percent <= kUnstableCovPercent},
          {"warnings", r.warnings}};
}

}  // namespace

json times_json(const std::vector<QueryTime>& timed) {
  json out = json::array();
  for (const QueryTime& q : timed) {
    out.push_back({{"startEnqMs", q.start_ms},
                   {"endEnqMs", q.end_ms},
                   {"startH2dMs", q.start_ms},
                   {"endH2dMs", q.start_ms},
                   {"startComputeMs", q.start_ms},
                   {"endComputeMs", q.end_ms},
                   {"startD2hMs", q.end_ms},
                   {"endD2hMs", q.end_ms},
                   {"h2dMs", 0.0},
                   {"computeMs", q.ms()},
                   {"d2hMs", 0.0},
                   {"latencyMs", q.ms()}});
  }
  return out;
}

json profile_json(const ProfileReport& report, const std::vector<std::string>& names) {
  json out = json::array();
  out.push_back({{"count", report.iterations}});
  for (const ProfileRow& r : report.rows) {
    out.push_back(
        {{"name", r.node < names.size() ? names[r.node] : fmt::format("layer {}", r.node)},
         {"timeMs", r.total_ms},
         {"averageMs", r.average_ms},
         {"medianMs", r.median_ms},
         {"percentage", r.percent}});
  }
  return out;
}

json layer_info_json(const engine::Plan& plan, const engine::ResolvedShapes* shapes,
                     ProfilingVerbosity verbosity) {
  json layers = json::array();
  for (size_t n = 0; n < plan.layers.size(); ++n) {
    if (verbosity == ProfilingVerbosity::kLayerNamesOnly) {
      layers.push_back(plan.graph.nodes[n].name);
    } else {
      layers.push_back(layer_json(plan, shapes, n));
    }
  }
  json bindings = json::array();
  for (ir::ValueId v : plan.graph.inputs) bindings.push_back(plan.graph.value(v).name);
  for (ir::ValueId v : plan.graph.outputs) bindings.push_back(plan.graph.value(v).name);
  return {{"Layers", std::move(layers)}, {"Bindings", std::move(bindings)}};
}

// The model's name for reports: the file's stem.
json model_name(const ExecOptions& o) {
  const std::string& file = o.onnx.empty() ? o.load_engine : o.onnx;
  if (file.empty()) return nullptr;
  return std::filesystem::path(file).stem().string();
}

// The leading dim of the first input, when it has one: the batch in the models users bring.
json model_batch(const RunRecord& r) {
  if (r.inputs.empty() || r.inputs[0].dims.empty()) return nullptr;
  return r.inputs[0].dims[0];
}

json summary_json(const RunRecord& r) {
  const ExecOptions& o = *r.options;
  json streams = {{"inference_streams", r.streams},
                  {"threads_per_stream", o.threads},
                  {"cores_used", r.streams * o.threads}};
  return {
      {"schema", kSummarySchema},
      {"schema_version", kSummarySchemaVersion},
      {"source",
       {{"tool", "kiln exec"}, {"version", r.environment.kiln_version}, {"log", nullptr}}},
      {"started_at", r.started_at},
      {"command", o.args},
      {"model",
       {{"name", model_name(o)},
        {"batch", model_batch(r)},
        {"onnx", o.onnx.empty() ? json(nullptr) : json(o.onnx)},
        {"engine", o.load_engine.empty() ? json(nullptr) : json(o.load_engine)},
        {"saved_engine", o.save_engine.empty() ? json(nullptr) : json(o.save_engine)},
        {"inputs", tensors_info_json(r.inputs)},
        {"outputs", tensors_info_json(r.outputs)}}},
      {"build",
       {{"import_ms", optional_ms(r.import_ms)},
        {"build_ms", optional_ms(r.build_ms)},
        {"save_ms", optional_ms(r.save_ms)},
        {"load_ms", optional_ms(r.load_ms)},
        {"precision", r.precision},
        {"builder_optimization_level", o.builder_optimization_level}}},
      {"environment", environment_json(r.environment)},
      {"execution", std::move(streams)},
      {"policy", policy_json(o)},
      {"results", results_json(r)},
      {"profile", profile_section(r)},
      {"throughput_search", search_json(r)},
  };
}

Status write_json(const std::filesystem::path& path, const json& j) {
  std::string text;
  if (j.is_array()) {
    text = "[\n";
    for (size_t i = 0; i < j.size(); ++i) {
      text += (i == 0 ? "  " : ", ") + j[i].dump() + "\n";
    }
    text += "]\n";
  } else {
    text = j.dump(2) + "\n";
  }
  return io::write_file_atomic(path, text);
}

}  // namespace kiln::cli::exec
