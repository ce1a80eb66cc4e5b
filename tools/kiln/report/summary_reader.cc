#include "report/summary_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "exec/exports.h"
#include "report/json_fields.h"

namespace kiln::cli::report {
namespace {

using json = nlohmann::json;

// One profile row. `count` (the profiled queries) turns a total into a per-query time when the
// row has no averageMs (trtexec 7.x).
Result<LayerTime> read_layer(const Fields& f, std::optional<int64_t> count) {
  LayerTime layer;
  KILN_ASSIGN_OR_RETURN(layer.name, f.text("name", Need::kValue));
  KILN_ASSIGN_OR_RETURN(auto average, f.number("averageMs", Need::kOptional, 0));
  if (average) {
    layer.average_ms = *average;
  } else {
    KILN_ASSIGN_OR_RETURN(auto total, f.number("timeMs", Need::kValue, 0));
    if (!count || *count < 1) {
      return f.error("averageMs", "missing, and without a count timeMs is not per query");
    }
    layer.average_ms = *total / static_cast<double>(*count);
  }
  KILN_ASSIGN_OR_RETURN(auto percent, f.number("percentage", Need::kOptional, 0));
  layer.percent = percent.value_or(-1);  // filled from the times below when absent
  return layer;
}

Result<std::vector<LayerTime>> read_layers(const Fields& parent, const json& array, size_t first,
                                           std::optional<int64_t> count) {
  std::vector<LayerTime> layers;
  double total = 0;
  for (size_t i = first; i < array.size(); ++i) {
    const Fields f = parent.element(i);
    if (!f.node().is_object()) {
      return parent.error(fmt::format("[{}]", i),
                          "expected a layer object, got " + describe_json(f.node()));
    }
    KILN_ASSIGN_OR_RETURN(LayerTime layer, read_layer(f, count));
    total += layer.average_ms;
    layers.push_back(std::move(layer));
  }
  for (LayerTime& l : layers) {
    if (l.percent < 0) l.percent = total > 0 ? 100 * l.average_ms / total : 0;
  }
  return layers;
}

Result<std::optional<LayerError>> read_layer_error(const Fields& f) {
  LayerError e;
  KILN_ASSIGN_OR_RETURN(e.name, f.text("name", Need::kValue));
  KILN_ASSIGN_OR_RETURN(e.rel_err, f.number("rel_err", Need::kOptional, 0));
  KILN_ASSIGN_OR_RETURN(e.max_abs_err, f.number("max_abs_err", Need::kOptional, 0));
  KILN_ASSIGN_OR_RETURN(e.sqnr_db, f.number("sqnr_db", Need::kOptional));
  return std::optional<LayerError>(std::move(e));
}

Result<std::optional<Accuracy>> read_accuracy(const Fields& root) {
  KILN_ASSIGN_OR_RETURN(auto f, root.object("accuracy", Need::kOptional));
  if (!f) return std::optional<Accuracy>();
  Accuracy a;
  KILN_ASSIGN_OR_RETURN(a.reference, f->text("reference", Need::kValue));
  KILN_ASSIGN_OR_RETURN(a.samples, f->integer("samples", Need::kOptional, 1));
  KILN_ASSIGN_OR_RETURN(a.metric, f->text("metric", Need::kOptional));
  KILN_ASSIGN_OR_RETURN(a.value, f->number("value", Need::kOptional));
  KILN_ASSIGN_OR_RETURN(a.reference_value, f->number("reference_value", Need::kOptional));
  KILN_ASSIGN_OR_RETURN(a.delta, f->number("delta", Need::kOptional));
  KILN_ASSIGN_OR_RETURN(a.max_abs_err, f->number("max_abs_err", Need::kOptional, 0));
  KILN_ASSIGN_OR_RETURN(const json* layers, f->array("layers", Need::kOptional));
  if (layers != nullptr) {
    const Fields lf(*layers, f->file(), f->path_of("layers"));
    for (size_t i = 0; i < layers->size(); ++i) {
      const Fields e = lf.element(i);
      if (!e.node().is_object()) {
        return lf.error(fmt::format("[{}]", i),
                        "expected an object, got " + describe_json(e.node()));
      }
      KILN_ASSIGN_OR_RETURN(auto layer, read_layer_error(e));
      a.layers.push_back(std::move(*layer));
    }
  }
  return std::optional<Accuracy>(std::move(a));
}

Status read_header(const Fields& f, Run& run) {
  KILN_ASSIGN_OR_RETURN(auto version, f.integer("schema_version", Need::kValue));
  if (*version < kOldestReadableSummaryVersion || *version > exec::kSummarySchemaVersion) {
    return f.error("schema_version",
                   fmt::format("version {} is not one this kiln reads ({} to {})", *version,
                               kOldestReadableSummaryVersion, exec::kSummarySchemaVersion));
  }
  KILN_ASSIGN_OR_RETURN(auto source, f.object("source", Need::kValue));
  KILN_ASSIGN_OR_RETURN(const std::string tool, source->text("tool", Need::kValue));
  run.backend = backend_of_tool(tool);
  if (run.backend.empty()) return source->error("tool", "is empty");
  KILN_ASSIGN_OR_RETURN(run.version, source->text("version", Need::kNullable));
  KILN_ASSIGN_OR_RETURN(run.started_at, f.text("started_at", Need::kOptional));
  KILN_ASSIGN_OR_RETURN(const json* command, f.array("command", Need::kOptional));
  if (command != nullptr) {
    for (size_t i = 0; i < command->size(); ++i) {
      const json& arg = (*command)[i];
      if (!arg.is_string()) {
        return f.error(fmt::format("command[{}]", i),
                       "expected a string, got " + describe_json(arg));
      }
      const std::string& s = arg.get_ref<const std::string&>();
      if (s.rfind("--exportProfile=", 0) == 0) run.profile_exports.push_back(s.substr(16));
      if (s == "--exportProfile" && i + 1 < command->size() && (*command)[i + 1].is_string()) {
        run.profile_exports.push_back((*command)[i + 1].get<std::string>());
      }
    }
  }
  KILN_ASSIGN_OR_RETURN(auto env, f.object("environment", Need::kOptional));
  if (env) {
    KILN_ASSIGN_OR_RETURN(run.device, env->text("device", Need::kOptional));
  }
  return Status::ok();
}

Status read_model(const Fields& f, Run& run) {
  KILN_ASSIGN_OR_RETURN(auto model, f.object("model", Need::kValue));
  KILN_ASSIGN_OR_RETURN(run.model, model->text("name", Need::kNullable));
  if (run.model.empty()) run.model = "(unnamed)";
  KILN_ASSIGN_OR_RETURN(run.batch, model->integer("batch", Need::kNullable, 1));
  for (const char* key : {"saved_engine", "engine"}) {
    KILN_ASSIGN_OR_RETURN(const std::string engine, model->text(key, Need::kOptional));
    if (run.engine.empty()) run.engine = engine;
  }
  KILN_ASSIGN_OR_RETURN(auto build, f.object("build", Need::kValue));
  KILN_ASSIGN_OR_RETURN(run.precision, build->text("precision", Need::kNullable));
  if (run.precision.empty()) run.precision = "unknown";
  std::transform(run.precision.begin(), run.precision.end(), run.precision.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  KILN_ASSIGN_OR_RETURN(auto execution, f.object("execution", Need::kValue));
  KILN_ASSIGN_OR_RETURN(auto streams, execution->integer("inference_streams", Need::kValue, 1));
  run.streams = static_cast<int>(std::min<int64_t>(*streams, 1 << 20));
  KILN_ASSIGN_OR_RETURN(run.threads, execution->integer("threads_per_stream", Need::kNullable, 1));
  return Status::ok();
}

Status read_results(const Fields& f, Run& run) {
  KILN_ASSIGN_OR_RETURN(auto results, f.object("results", Need::kValue));
  KILN_ASSIGN_OR_RETURN(auto qps, results->number("throughput_qps", Need::kValue, 0));
  run.throughput_qps = *qps;
  KILN_ASSIGN_OR_RETURN(run.queries, results->integer("queries", Need::kNullable, 0));
  KILN_ASSIGN_OR_RETURN(run.stable, results->boolean("stable", Need::kOptional));
  KILN_ASSIGN_OR_RETURN(auto latency, results->object("latency_ms", Need::kValue));
  KILN_ASSIGN_OR_RETURN(run.p50_ms, latency->number("median", Need::kNullable, 0));
  KILN_ASSIGN_OR_RETURN(const json* percentiles, latency->array("percentiles", Need::kValue));
  const Fields pf(*percentiles, f.file(), latency->path_of("percentiles"));
  for (size_t i = 0; i < percentiles->size(); ++i) {
    const Fields p = pf.element(i);
    if (!p.node().is_object()) {
      return pf.error(fmt::format("[{}]", i), "expected an object, got " + describe_json(p.node()));
    }
    KILN_ASSIGN_OR_RETURN(auto percentile, p.number("percentile", Need::kValue, 0));
    KILN_ASSIGN_OR_RETURN(auto ms, p.number("ms", Need::kNullable, 0));
    if (std::abs(*percentile - 99) < 1e-9) run.p99_ms = ms;
  }
  return Status::ok();
}

Status read_profile_section(const Fields& f, Run& run) {
  KILN_ASSIGN_OR_RETURN(auto profile, f.object("profile", Need::kOptional));
  if (!profile) return Status::ok();
  KILN_ASSIGN_OR_RETURN(auto iterations, profile->integer("iterations", Need::kOptional, 0));
  KILN_ASSIGN_OR_RETURN(const json* layers, profile->array("layers", Need::kValue));
  const Fields lf(*layers, f.file(), profile->path_of("layers"));
  KILN_ASSIGN_OR_RETURN(run.layers, read_layers(lf, *layers, 0, iterations));
  if (!run.layers.empty()) run.profile_from = "the summary";
  return Status::ok();
}

}  // namespace

std::string backend_of_tool(std::string_view tool) {
  std::string t(tool);
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
  const size_t first = t.find_first_not_of(' ');
  if (first == std::string::npos) return "";
  t = t.substr(first, t.find_last_not_of(' ') - first + 1);
  if (t == "kiln" || t.rfind("kiln ", 0) == 0) return "kiln";
  return t;
}

Result<Run> read_summary(const json& summary, const std::string& file) {
  const Fields f(summary, file);
  if (!summary.is_object()) {
    return invalid_argument("{}: a summary is a JSON object, got {}", file, describe_json(summary));
  }
  Run run;
  run.file = file;
  KILN_RETURN_IF_ERROR(read_header(f, run));
  KILN_RETURN_IF_ERROR(read_model(f, run));
  KILN_RETURN_IF_ERROR(read_results(f, run));
  KILN_RETURN_IF_ERROR(read_profile_section(f, run));
  KILN_ASSIGN_OR_RETURN(run.accuracy, read_accuracy(f));
  return run;
}

bool looks_like_profile(const json& j) {
  return j.is_array() && !j.empty() && j[0].is_object() && j[0].size() == 1 &&
         j[0].contains("count");
}

Result<std::vector<LayerTime>> read_profile(const json& profile, const std::string& file) {
  if (!looks_like_profile(profile)) {
    return invalid_argument("{}: a profile is an array that starts with {{\"count\": N}}", file);
  }
  const Fields f(profile, file);
  KILN_ASSIGN_OR_RETURN(auto count, f.element(0).integer("count", Need::kValue, 0));
  return read_layers(f, profile, 1, count);
}

}  // namespace kiln::cli::report
