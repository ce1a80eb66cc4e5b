#include "debug/debug_precision_command.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <ostream>
#include <set>

#include "compare/compare_inputs.h"
#include "compare/compare_report.h"
#include "compare/compare_run.h"
#include "compare/layer_compare.h"
#include "debug/precision_search.h"
#include "engine/builder.h"
#include "frontend/onnx/importer.h"
#include "options.h"
#include "quant/calibration_file.h"
#include "runtime/engine.h"
#include "runtime/execution_context.h"
#include "runtime/reference_executor.h"

namespace kiln::cli::debug {
namespace {

using compare::CompareInputs;

Result<compare::Bounds> parse_check(const DebugPrecisionOptions& o, std::ostream& out) {
  KILN_ASSIGN_OR_RETURN(compare::Bounds b, compare::parse_bounds(o.atol, o.rtol, o.cosine, ""));
  if (!b.cosine && !b.tol.active) {
    b.cosine = 0.99;
    fmt::print(out, "[I] no tolerance given: --cosine=0.99\n");
  }
  return b;
}

// The samples, cut into batches, and the reference's outputs for each batch (computed once).
struct Fixture {
  ir::Graph model;
  CompareInputs inputs;
  int64_t batch = 1;
  std::vector<runtime::NamedTensors> batches;
  std::vector<std::vector<Tensor>> reference;
  std::vector<engine::ProfileSpec> profiles;
  std::optional<quant::Calibration> calibration;
};

// One profile admitting every batch: the batch axis from 1 to the batch size (static inputs stay).
std::vector<engine::ProfileSpec> batch_profiles(const ir::Graph& g,
                                                const runtime::NamedTensors& first) {
  engine::ProfileSpec spec;
  for (ir::ValueId v : g.inputs) {
    const ir::Value& in = g.value(v);
    if (in.desc.is_static()) continue;
    const Dims& dims = first.at(in.name).dims();
    Dims min = dims;
    if (!min.empty()) min[0] = 1;
    spec[in.name] = ShapeRange{min, dims, dims};
  }
  if (spec.empty()) return {};
  return {spec};
}

Status prepare(const DebugPrecisionOptions& o, Fixture& f, std::ostream& out) {
  KILN_ASSIGN_OR_RETURN(f.model, frontend::import_onnx_file(o.onnx));
  compare::InputSource source{o.data, {}, o.samples, 8, o.seed, o.image};
  if (!o.load_inputs.empty()) {
    KILN_ASSIGN_OR_RETURN(source.files, parse_named_files("--loadInputs", o.load_inputs));
  }
  KILN_ASSIGN_OR_RETURN(f.inputs, CompareInputs::open(f.model, source));
  const CompareInputs& inputs = f.inputs;
  if (o.batch < 0) return invalid_argument("--batch must be >= 1, got {}", o.batch);
  int64_t batch = o.batch > 0 ? o.batch : std::min<int64_t>(inputs.samples(), 32);
  // A model whose batch is fixed runs in batches of that size, and only in those.
  const ir::TensorDesc& first = f.model.value(f.model.inputs.front()).desc;
  if (first.rank() >= 1 && first.dim(0).is_known()) {
    const int64_t fixed = first.dim(0).value;
    if (o.batch > 0 && o.batch != fixed) {
      return invalid_argument("--batch={}: the model's batch is fixed at {}", o.batch, fixed);
    }
    if (inputs.samples() % fixed != 0) {
      return invalid_argument("{} samples do not fill batches of {} (the model's fixed batch)",
                              inputs.samples(), fixed);
    }
    batch = fixed;
  }
  f.batch = batch;
  for (int64_t b = 0; b < inputs.samples(); b += batch) {
    f.batches.push_back(inputs.batch(b, std::min(batch, inputs.samples() - b)));
  }
  f.profiles = batch_profiles(f.model, f.batches.front());
  KILN_ASSIGN_OR_RETURN(runtime::ReferenceExecutor ref,
                        runtime::ReferenceExecutor::create(f.model));
  for (const runtime::NamedTensors& feeds : f.batches) {
    KILN_ASSIGN_OR_RETURN(std::vector<Tensor> outs, ref.run(feeds));
    f.reference.push_back(std::move(outs));
  }
  fmt::print(out, "[I] inputs: {}; batch {}; reference outputs computed once\n", inputs.describe(),
             batch);
  if (o.calib.empty()) {
    fmt::print(out,
               "[W] no --calib: placeholder ranges (the search then says which layers the "
               "placeholders hurt, not what a calibration would)\n");
  } else {
    Result<quant::Calibration> c = quant::read_calibration(o.calib);
    if (!c.is_ok()) return c.status().with_context(fmt::format("--calib={}", o.calib));
    f.calibration = std::move(c).value();
  }
  return Status::ok();
}

Result<std::shared_ptr<const runtime::Engine>> build(const Fixture& f, bool int8,
                                                     const std::vector<std::string>& fp32,
                                                     int threads) {
  engine::BuildOptions b;
  b.optimization_level = 0;  // tactics do not change the numbers that matter here
  b.threads = threads;
  b.profiles = f.profiles;
  b.int8 = int8;
  b.calibration = f.calibration;
  for (const std::string& layer : fp32) b.layer_precisions.push_back({layer, "fp32"});
  b.precision_constraints = quant::PrecisionConstraints::kObey;
  KILN_ASSIGN_OR_RETURN(engine::Plan plan, engine::build_plan(f.model, b));
  return runtime::Engine::create(std::move(plan));
}

// kiln compare's loop on one engine over the fixture's samples: against the reference outputs
// computed once, or (all_layers) against a reference run that also captures every shared tensor.
Result<compare::CompareResult> compare_engine(const Fixture& f,
                                              std::shared_ptr<const runtime::Engine> e,
                                              const compare::Tolerance& tol, bool all_layers,
                                              int threads) {
  compare::RunSetup s;
  s.model = &f.model;
  s.engine_paths = {all_layers ? "int8" : "candidate"};
  s.engines = {std::move(e)};
  s.inputs = &f.inputs;
  s.batch = f.batch;
  s.tol = tol;
  s.all_layers = all_layers;
  s.threads = threads;
  if (!all_layers) s.reference_outputs = &f.reference;
  compare::CompareResult r;
  r.samples = f.inputs.samples();
  r.batch = s.batch;
  for (ir::ValueId v : f.model.inputs) r.graph_inputs.push_back(f.model.value(v).name);
  KILN_RETURN_IF_ERROR(compare::run_comparison(s, r));
  return r;
}

// The engine against the reference outputs computed once, judged by compare's own bounds check.
Result<Trial> evaluate(const Fixture& f, std::shared_ptr<const runtime::Engine> e,
                       const compare::Bounds& bounds, int threads) {
  KILN_ASSIGN_OR_RETURN(const compare::CompareResult r,
                        compare_engine(f, std::move(e), bounds.tol, false, threads));
  Trial t{compare::check_bounds(r, bounds).empty(), 1.0, ""};
  std::vector<std::string> parts;
  for (const compare::OutputResult& o : r.engines[0].outputs) {
    if (!o.not_comparable.empty() || o.err.elements() == 0) continue;
    t.cosine = std::min(t.cosine, o.err.cosine());
    parts.push_back(fmt::format("'{}' cosine {:.6f}{}", o.name, o.err.cosine(),
                                bounds.tol.active ? fmt::format(", {} elements outside atol/rtol",
                                                                o.err.allclose_failures())
                                                  : ""));
  }
  t.detail = fmt::format("{}", fmt::join(parts, "; "));
  return t;
}

// The INT8 layers of `e`, most harmful first: ranked by the error each adds (compare's
// --all-layers ranking), then those the ranking could not place, in engine order.
Result<std::vector<std::string>> ranked_int8_layers(const Fixture& f,
                                                    std::shared_ptr<const runtime::Engine> e,
                                                    int threads) {
  std::set<std::string> int8;
  std::vector<std::string> in_order;
  for (size_t n = 0; n < e->plan().layers.size(); ++n) {
    if (e->plan().layers[n].precision != "int8") continue;
    int8.insert(e->graph().nodes[n].name);
    in_order.push_back(e->graph().nodes[n].name);
  }
  KILN_ASSIGN_OR_RETURN(const compare::CompareResult r,
                        compare_engine(f, std::move(e), {}, true, threads));
  std::vector<std::string> ranked;
  for (const compare::RankedLayer& l : compare::rank_layers(r.engines[0].layers, r.graph_inputs)) {
    if (int8.count(l.record->layer) &&
        std::find(ranked.begin(), ranked.end(), l.record->layer) == ranked.end()) {
      ranked.push_back(l.record->layer);
    }
  }
  for (const std::string& l : in_order) {
    if (std::find(ranked.begin(), ranked.end(), l) == ranked.end()) ranked.push_back(l);
  }
  return ranked;
}

}  // namespace

Result<bool> debug_precision_command(const DebugPrecisionOptions& o, std::ostream& out) {
  if (o.onnx.empty()) return invalid_argument("--onnx is required");
  if (!o.data.empty() && !o.load_inputs.empty()) {
    return invalid_argument("give --data or --loadInputs, not both");
  }
  KILN_ASSIGN_OR_RETURN(const compare::Bounds check, parse_check(o, out));
  Fixture f;
  KILN_RETURN_IF_ERROR(prepare(o, f, out));
  KILN_ASSIGN_OR_RETURN(auto fp32, build(f, false, {}, o.threads));
  KILN_ASSIGN_OR_RETURN(const Trial fp32_trial, evaluate(f, fp32, check, o.threads));
  fmt::print(out, "[I] FP32 engine: {} ({})\n", fp32_trial.detail,
             fp32_trial.passed ? "pass" : "FAIL");
  if (!fp32_trial.passed) {
    fmt::print(out,
               "[E] the FP32 engine itself misses the tolerance: no INT8 choice can meet it\n");
    return false;
  }
  KILN_ASSIGN_OR_RETURN(auto int8, build(f, true, {}, o.threads));
  KILN_ASSIGN_OR_RETURN(const Trial int8_trial, evaluate(f, int8, check, o.threads));
  fmt::print(out, "[I] INT8 engine: {} ({})\n", int8_trial.detail,
             int8_trial.passed ? "pass" : "FAIL");
  if (int8_trial.passed) {
    fmt::print(out, "[I] every INT8 layer can stay INT8: nothing to keep in FP32\n");
    return true;
  }
  KILN_ASSIGN_OR_RETURN(const std::vector<std::string> ranked,
                        ranked_int8_layers(f, int8, o.threads));
  fmt::print(out, "[I] {} INT8 layers, ranked by the error each adds; bisecting\n", ranked.size());
  const Evaluate eval = [&](const std::vector<std::string>& layers) -> Result<Trial> {
    KILN_ASSIGN_OR_RETURN(auto e, build(f, true, layers, o.threads));
    return evaluate(f, std::move(e), check, o.threads);
  };
  const auto show = [&](size_t k, const Trial& t) {
    fmt::print(out, "[I] {:>4} layers in FP32: {} ({})\n", k, t.detail, t.passed ? "pass" : "fail");
  };
  KILN_ASSIGN_OR_RETURN(SearchResult bisected, search_fp32_prefix(ranked, eval, show));
  if (bisected.found && bisected.fp32_layers.size() > 1) {
    fmt::print(out, "[I] {} layers pass; trying to do without each of them\n",
               bisected.fp32_layers.size());
  }
  KILN_ASSIGN_OR_RETURN(const SearchResult r, prune_fp32_set(std::move(bisected), eval, show));
  if (!r.found) {
    fmt::print(out, "[E] no prefix of the ranking meets the tolerance ({} builds)\n", r.builds);
    return false;
  }
  fmt::print(out, "[I] keep {} of {} INT8 layers in FP32 ({} builds): {}\n", r.fp32_layers.size(),
             ranked.size(), r.builds + 2, fmt::join(r.fp32_layers, ", "));
  fmt::print(out, "{} --precisionConstraints=obey\n", layer_precisions_flag(r.fp32_layers));
  return true;
}

}  // namespace kiln::cli::debug
