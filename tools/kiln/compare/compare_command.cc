#include "compare/compare_command.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <ostream>

#include "compare/compare_report.h"
#include "compare/compare_run.h"
#include "compare/engine_match.h"
#include "exec/exports.h"
#include "frontend/onnx/importer.h"
#include "io/file_util.h"
#include "io/npy.h"
#include "options.h"

namespace kiln::cli::compare {
namespace {

Result<Tensor> read_labels(const std::string& path, int64_t samples) {
  KILN_ASSIGN_OR_RETURN(Tensor t, io::read_npy(path));
  if (t.dtype() != DType::kI64 || t.rank() != 1) {
    return invalid_argument("--labels '{}' holds {}; it needs int64 [samples]", path, t.desc());
  }
  if (t.dim(0) < samples) {
    return invalid_argument("--labels '{}' has {} labels for {} samples", path, t.dim(0), samples);
  }
  return t;
}

// The largest batch an engine admits: the first input's largest first dim over the profiles (a
// static engine's only one); unbounded when nothing fixes it.
int64_t engine_max_batch(const runtime::Engine& e) {
  int64_t best = 0;
  for (const engine::Profile& p : e.plan().profiles) {
    if (!p.inputs.empty() && !p.inputs[0].max.empty()) best = std::max(best, p.inputs[0].max[0]);
  }
  if (best > 0) return best;
  const ir::Graph& g = e.graph();
  if (!g.inputs.empty()) {
    const ir::TensorDesc& d = g.value(g.inputs[0]).desc;
    if (d.rank() >= 1 && d.dim(0).is_known()) return d.dim(0).value;
  }
  return INT64_MAX;
}

// --batch, else the largest batch every engine admits, at most 32 and at most the samples.
Result<int64_t> choose_batch(const CompareOptions& o, const RunSetup& s, int64_t samples) {
  if (o.batch < 0) return invalid_argument("--batch must be >= 1, got {}", o.batch);
  if (o.batch > 0) return o.batch;
  int64_t batch = std::min<int64_t>(samples, 32);
  for (const auto& e : s.engines) batch = std::min(batch, engine_max_batch(*e));
  return std::max<int64_t>(batch, 1);
}

// Sets the `accuracy` object of each engine's --exportSummary file (one per engine, in order).
Status update_summaries(const std::string& list, const CompareResult& r, std::ostream& out) {
  KILN_ASSIGN_OR_RETURN(std::vector<std::string> files, split_list("--summaries", list));
  if (files.size() != r.engines.size()) {
    return invalid_argument("--summaries names {} files for {} engines (one per engine, in order)",
                            files.size(), r.engines.size());
  }
  for (size_t i = 0; i < files.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(const std::string text, io::read_file(files[i]));
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("schema")) {
      return invalid_argument("--summaries: '{}' is not a kiln exec summary JSON", files[i]);
    }
    j["accuracy"] = accuracy_json(r, r.engines[i]);
    KILN_RETURN_IF_ERROR(exec::write_json(files[i], j));
    fmt::print(out, "[I] accuracy of {} written into {}\n", r.engines[i].path, files[i]);
  }
  return Status::ok();
}

Status load_engines(const CompareOptions& o, const ir::Graph& model, RunSetup& s) {
  KILN_ASSIGN_OR_RETURN(s.engine_paths, split_list("--engines", o.engines));
  if (s.engine_paths.empty()) return invalid_argument("--engines names no engine file");
  for (const std::string& path : s.engine_paths) {
    Result<std::shared_ptr<const runtime::Engine>> e = load_compare_engine(path);
    if (!e.is_ok()) {
      return Status(e.status().code(), fmt::format("engine '{}': {}", path, e.status().message()));
    }
    KILN_RETURN_IF_ERROR(check_engine_matches(model, o.onnx, **e, path));
    s.engines.push_back(*std::move(e));
  }
  return Status::ok();
}

}  // namespace

Result<bool> compare_command(const CompareOptions& o, std::ostream& out, std::ostream& err) {
  if (o.onnx.empty()) return invalid_argument("--onnx is required (the reference model)");
  if (o.engines.empty()) return invalid_argument("--engines is required: a.plan[,b.plan...]");
  if (!o.data.empty() && !o.load_inputs.empty()) {
    return invalid_argument("give --data or --loadInputs, not both");
  }
  if (o.samples < 0) return invalid_argument("--samples must be >= 1, got {}", o.samples);
  KILN_ASSIGN_OR_RETURN(const Bounds bounds, parse_bounds(o.atol, o.rtol, o.cosine, o.top1));
  KILN_ASSIGN_OR_RETURN(const ir::Graph model, frontend::import_onnx_file(o.onnx));
  RunSetup s;
  s.model = &model;
  KILN_RETURN_IF_ERROR(load_engines(o, model, s));
  InputSource source{o.data, {}, o.samples, o.batch > 0 ? o.batch : 8, o.seed, o.image};
  if (!o.load_inputs.empty()) {
    KILN_ASSIGN_OR_RETURN(source.files, parse_named_files("--loadInputs", o.load_inputs));
  }
  KILN_ASSIGN_OR_RETURN(const CompareInputs inputs, CompareInputs::open(model, source));
  s.inputs = &inputs;
  KILN_ASSIGN_OR_RETURN(s.batch, choose_batch(o, s, inputs.samples()));
  CompareResult r;
  r.onnx = o.onnx;
  r.batch = s.batch;
  r.samples = inputs.samples();
  r.inputs = inputs.describe();
  for (ir::ValueId v : model.inputs) r.graph_inputs.push_back(model.value(v).name);
  if (!o.labels.empty()) {
    KILN_ASSIGN_OR_RETURN(s.labels, read_labels(o.labels, r.samples));
  }
  s.all_layers = o.all_layers;
  s.tol = bounds.tol;
  s.threads = o.threads;
  fmt::print(out,
             "[I] reference: kiln's reference executor on {} (the imported graph, "
             "unoptimized)\n[I] inputs: {}; batch {}\n",
             o.onnx, r.inputs, s.batch);
  KILN_RETURN_IF_ERROR(run_comparison(s, r));
  print_outputs(r, out);
  if (o.all_layers) print_layers(r, o.top_layers, out);
  const std::vector<std::string> failures = check_bounds(r, bounds);
  if (!o.json.empty()) {
    KILN_RETURN_IF_ERROR(exec::write_json(o.json, compare_json(r, bounds, failures)));
    fmt::print(out, "[I] figures written to {}\n", o.json);
  }
  if (!o.summaries.empty()) KILN_RETURN_IF_ERROR(update_summaries(o.summaries, r, out));
  for (const std::string& f : failures) fmt::print(out, "FAIL {}\n", f);
  if (!failures.empty()) {
    out.flush();
    fmt::print(err, "kiln compare: {} tolerance check{} failed; first: {}\n", failures.size(),
               failures.size() == 1 ? "" : "s", failures[0]);
    return false;
  }
  fmt::print(out, "[I] PASSED\n");
  return true;
}

}  // namespace kiln::cli::compare
