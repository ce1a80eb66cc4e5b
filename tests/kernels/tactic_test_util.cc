#include "kernels/tactic_test_util.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "kernels/alloc_counter.h"
#include "ops/infer_graph.h"
#include "runtime/reference_executor.h"

namespace kiln::testing {
namespace {

// The tensor behind each node input: the feed, or the initializer of a constant.
std::vector<Tensor> node_inputs(const OpGraph& og) {
  const ir::Node& node = og.graph.nodes[0];
  std::vector<Tensor> out;
  for (ir::ValueId v : node.inputs) {
    if (v == ir::kNoValue) {
      out.emplace_back();
      continue;
    }
    const ir::Value& value = og.graph.value(v);
    out.push_back(value.initializer ? *value.initializer : og.feeds.at(value.name));
  }
  return out;
}

void poison(Tensor& t) {
  if (t.dtype() == DType::kF32) {
    for (float& v : t.span<float>()) v = std::numeric_limits<float>::quiet_NaN();
  } else {
    std::memset(t.raw_data(), 0xAB, t.nbytes());
  }
}

}  // namespace

tactics::LayerSpec layer_spec(const ir::Graph& g) {
  const ir::Node& node = g.nodes[0];
  tactics::LayerSpec spec;
  spec.node = &node;
  spec.since_version = ops::resolve_op(node).since_version;
  for (ir::ValueId v : node.inputs) {
    spec.inputs.push_back(v == ir::kNoValue ? ir::TensorDesc{} : g.value(v).desc);
    spec.constants.push_back(v == ir::kNoValue ? nullptr : g.value(v).constant());
  }
  for (ir::ValueId v : node.outputs) spec.outputs.push_back(g.value(v).desc);
  return spec;
}

Result<TacticRun> run_tactic(const std::string& name, const OpCase& c) {
  const tactics::Tactic* tactic = tactics::find_tactic(name);
  if (tactic == nullptr) return not_found("no tactic named '{}'", name);
  KILN_ASSIGN_OR_RETURN(OpGraph og, build_op_graph(c));
  const tactics::LayerSpec spec = layer_spec(og.graph);
  if (std::string why = tactic->why_not(spec); !why.empty()) {
    return unsupported("{} refuses the layer: {}", name, why);
  }
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<tactics::LayerKernel> kernel, tactic->instantiate(spec));
  return run_layer_kernel(*kernel, og);
}

Result<TacticRun> run_layer_kernel(tactics::LayerKernel& kernel, const OpGraph& og,
                                   const std::vector<Tensor>& extra_inputs) {
  std::vector<Tensor> inputs = node_inputs(og);
  inputs.insert(inputs.end(), extra_inputs.begin(), extra_inputs.end());
  std::vector<TensorView> in_views;
  for (const Tensor& t : inputs) in_views.push_back(t.defined() ? TensorView::of(t) : TensorView{});
  TacticRun run;
  for (ir::ValueId v : og.graph.nodes[0].outputs) {
    const ir::TensorDesc& d = og.graph.value(v).desc;
    run.outputs.emplace_back(d.dtype, d.static_dims());
  }
  std::vector<TensorView> out_views;
  for (const Tensor& t : run.outputs) out_views.push_back(TensorView::of(t));

  KILN_RETURN_IF_ERROR(kernel.reshape(in_views, out_views));
  for (Tensor& t : run.outputs) poison(t);
  KILN_RETURN_IF_ERROR(kernel.run(in_views, out_views));
  for (Tensor& t : run.outputs) poison(t);  // the second run must not rely on the first's output
  {
    const auto start = std::chrono::steady_clock::now();
    AllocCounter counter;
    const Status st = kernel.run(in_views, out_views);
    run.run_allocations = counter.count();
    run.run_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    KILN_RETURN_IF_ERROR(st);
  }
  return run;
}

void expect_matches_reference(const std::string& tactic, const OpCase& c, Tolerance tol,
                              int64_t max_run_allocations) {
  SCOPED_TRACE(tactic + " on " + case_text(c));
  auto og = build_op_graph(c);
  ASSERT_TRUE(og.is_ok()) << og.status().to_string();
  auto exec = runtime::ReferenceExecutor::create(og->graph);
  ASSERT_TRUE(exec.is_ok()) << exec.status().to_string();
  auto want = exec->run(og->feeds);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  auto got = run_tactic(tactic, c);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  ASSERT_EQ(got->outputs.size(), want->size());
  for (size_t i = 0; i < want->size(); ++i) {
    EXPECT_EQ(compare_tensors(got->outputs[i], (*want)[i], tol), "") << "output " << i;
  }
  EXPECT_LE(got->run_allocations, max_run_allocations) << "run() allocated";
}

void expect_rejected(const std::string& tactic, const OpCase& c, const std::string& fragment) {
  SCOPED_TRACE(tactic + " on " + case_text(c));
  const tactics::Tactic* t = tactics::find_tactic(tactic);
  ASSERT_NE(t, nullptr) << "no tactic named " << tactic;
  auto og = build_op_graph(c);
  ASSERT_TRUE(og.is_ok()) << og.status().to_string();
  const std::string why = t->why_not(layer_spec(og->graph));
  EXPECT_NE(why, "") << "the tactic accepted the layer";
  EXPECT_NE(why.find(fragment), std::string::npos) << "reason: " << why;
}

Tensor random_f32(const Dims& dims, uint64_t seed) {
  Tensor t(DType::kF32, dims);
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : t.span<float>()) v = dist(gen);
  return t;
}

std::string case_text(const OpCase& c) {
  std::string s = c.op_type + "(";
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (i > 0) s += ", ";
    s += c.inputs[i].tensor ? c.inputs[i].tensor->desc() : "absent";
    if (c.inputs[i].constant) s += " const";
  }
  return s + ")";
}

}  // namespace kiln::testing
