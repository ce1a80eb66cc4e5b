#include "compare/compare_run.h"

#include <fmt/format.h>

#include "compare/as_float.h"
#include "runtime/execution_context.h"
#include "runtime/reference_executor.h"

namespace kiln::cli::compare {
namespace {

struct EngineState {
  std::unique_ptr<runtime::ExecutionContext> ctx;
  std::unique_ptr<LayerComparer> layers;
};

// Appends the cosine of each of the `rows` samples of a batch (the first axis is the sample axis).
void add_sample_cosines(std::span<const float> got, std::span<const float> ref, int64_t rows,
                        std::vector<double>& out) {
  const size_t per = rows > 0 ? got.size() / static_cast<size_t>(rows) : 0;
  for (int64_t i = 0; i < rows; ++i) {
    ErrorStats one;
    const size_t at = static_cast<size_t>(i) * per;
    one.add(got.subspan(at, per), ref.subspan(at, per), Tolerance{});
    out.push_back(one.cosine());
  }
}

// Compares one engine's outputs of a batch (samples from `begin`) with the reference's, in model
// output order; output `label_out` is also scored against the labels.
void compare_outputs(const runtime::Engine& engine, const std::vector<Tensor>& got,
                     const std::vector<Tensor>& ref, const RunSetup& s, int64_t begin,
                     size_t label_out, EngineResult& er) {
  const ir::Graph& eg = engine.graph();
  for (size_t o = 0; o < er.outputs.size(); ++o) {
    OutputResult& r = er.outputs[o];
    size_t k = 0;
    while (k < eg.outputs.size() && eg.value(eg.outputs[k]).name != r.name) ++k;
    auto values = engine_tensor_as_float(engine, eg.outputs[k], TensorView::of(got[k]));
    if (auto* nc = std::get_if<NotComparable>(&values)) {
      r.not_comparable = nc->reason;
      continue;
    }
    const std::vector<float>& g = std::get<FloatTensor>(values).values;
    if (ref[o].dtype() != DType::kF32 || ref[o].dims() != got[k].dims()) {
      r.not_comparable =
          fmt::format("not comparable (engine {}, reference {})", got[k].desc(), ref[o].desc());
      continue;
    }
    r.err.add(g, ref[o].span<float>(), s.tol);
    add_sample_cosines(g, ref[o].span<float>(), got[k].dim(0), r.sample_cosines);
    if (r.classes == 0) continue;
    r.agreement.add(g, ref[o].span<float>(), r.classes);
    if (s.labels && o == label_out) {
      const auto rows = static_cast<size_t>(got[k].dim(0));
      r.correct += count_correct(
          g, s.labels->span<int64_t>().subspan(static_cast<size_t>(begin), rows), r.classes);
    }
  }
}

Status init_results(const RunSetup& s, CompareResult& result, std::vector<EngineState>& states) {
  const ir::Graph& m = *s.model;
  for (size_t e = 0; e < s.engines.size(); ++e) {
    EngineResult er{s.engine_paths[e], {}, {}};
    for (ir::ValueId v : m.outputs) {
      OutputResult r;
      r.name = m.value(v).name;
      const ir::TensorDesc& d = m.value(v).desc;
      if (d.rank() == 2 && d.dim(1).is_known() && d.dim(1).value >= 2) r.classes = d.dim(1).value;
      er.outputs.push_back(std::move(r));
    }
    result.engines.push_back(std::move(er));
    EngineState st;
    KILN_ASSIGN_OR_RETURN(st.ctx, s.engines[e]->create_execution_context({.threads = s.threads}));
    if (s.all_layers) st.layers = std::make_unique<LayerComparer>(*s.engines[e], m);
    states.push_back(std::move(st));
  }
  for (ir::ValueId v : m.outputs) {
    const ir::TensorDesc& d = m.value(v).desc;
    if (d.rank() == 2 && d.dim(1).is_known() && d.dim(1).value >= 2) {
      result.labelled_output = m.value(v).name;
      break;
    }
  }
  if (s.labels && result.labelled_output.empty()) {
    return invalid_argument(
        "--labels needs a classifier output shaped [N, C]; the model's outputs "
        "are not");
  }
  result.labelled = s.labels.has_value();
  return Status::ok();
}

int64_t correct_in(const Tensor& scores, const Tensor& labels, int64_t begin) {
  const int64_t n = scores.dim(0), c = scores.dim(1);
  return count_correct(
      scores.span<float>(),
      labels.span<int64_t>().subspan(static_cast<size_t>(begin), static_cast<size_t>(n)), c);
}

}  // namespace

Status run_comparison(const RunSetup& s, CompareResult& result) {
  const ir::Graph& m = *s.model;
  std::vector<EngineState> states;
  KILN_RETURN_IF_ERROR(init_results(s, result, states));
  if (s.reference_outputs && s.all_layers) {
    return internal_error("a precomputed reference has no intermediate tensors for all_layers");
  }
  std::optional<runtime::ReferenceExecutor> ref;
  if (!s.reference_outputs) {
    KILN_ASSIGN_OR_RETURN(ref, runtime::ReferenceExecutor::create(m));
  }
  ReferenceValues ref_values;
  if (s.all_layers) {
    std::vector<std::string> wanted;
    for (const EngineState& st : states) {
      for (std::string& t : st.layers->tensors()) wanted.push_back(std::move(t));
    }
    capture_reference(*ref, m, std::move(wanted), ref_values);
  }
  size_t label_out = 0;
  while (label_out < m.outputs.size() &&
         m.value(m.outputs[label_out]).name != result.labelled_output)
    ++label_out;
  for (int64_t begin = 0; begin < result.samples; begin += s.batch) {
    const int64_t n = std::min(s.batch, result.samples - begin);
    const runtime::NamedTensors feeds = s.inputs->batch(begin, n);
    ref_values.clear();
    // Engines may quantize the model's inputs themselves (an INT8 engine's QuantizeLinear).
    if (s.all_layers) ref_values.insert(feeds.begin(), feeds.end());
    std::vector<Tensor> computed;
    if (!s.reference_outputs) {
      KILN_ASSIGN_OR_RETURN(computed, ref->run(feeds));
    }
    const std::vector<Tensor>& ref_out =
        s.reference_outputs ? (*s.reference_outputs)[static_cast<size_t>(begin / s.batch)]
                            : computed;
    if (s.labels) result.reference_correct += correct_in(ref_out[label_out], *s.labels, begin);
    for (size_t e = 0; e < states.size(); ++e) {
      EngineState& st = states[e];
      if (st.layers) st.layers->attach(*st.ctx, ref_values, s.tol);
      Result<std::vector<Tensor>> got = st.ctx->run(feeds);
      if (st.layers) LayerComparer::detach(*st.ctx);
      if (!got.is_ok()) {
        return Status(got.status().code(),
                      fmt::format("engine '{}' on samples {}..{}: {}", s.engine_paths[e], begin,
                                  begin + n - 1, got.status().message()));
      }
      compare_outputs(*s.engines[e], *got, ref_out, s, begin, label_out, result.engines[e]);
    }
  }
  for (size_t e = 0; e < states.size(); ++e) {
    if (states[e].layers) result.engines[e].layers = states[e].layers->finished_records();
  }
  return Status::ok();
}

}  // namespace kiln::cli::compare
