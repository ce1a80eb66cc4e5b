#include "engine/engine_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "io/random_input.h"
#include "passes/pass_harness.h"
#include "runtime/reference_executor.h"

namespace kiln::testing {
namespace {

std::vector<float> ramp(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.7f * static_cast<float>(i) + 0.3f);
  return v;
}

}  // namespace

OnnxBuilder small_cnn(bool dynamic_batch) {
  OnnxBuilder b;
  if (dynamic_batch) {
    b.input("x", 1, {-1, 3, 8, 8}, {"batch", "", "", ""});
  } else {
    b.input("x", 1, {2, 3, 8, 8});
  }
  b.initializer("w1", {4, 3, 3, 3}, ramp(108, 0.3f));
  b.initializer("b1", {4}, ramp(4, 0.1f));
  b.initializer("w2", {4, 4, 1, 1}, ramp(16, 0.5f));
  b.initializer("wg", {5, 4}, ramp(20, 0.4f));
  b.initializer("bg", {5}, ramp(5, 0.2f));
  auto& c1 = b.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1");
  set_attr_ints(c1, "pads", {1, 1, 1, 1});
  b.node("Relu", {"c1"}, {"r1"}, "relu1");
  b.node("Conv", {"r1", "w2"}, {"c2"}, "conv2");
  b.node("Add", {"c2", "r1"}, {"a"}, "add");
  b.node("GlobalAveragePool", {"a"}, {"p"}, "pool");
  b.node("Flatten", {"p"}, {"f"}, "flatten");
  auto& g = b.node("Gemm", {"f", "wg", "bg"}, {"y"}, "fc");
  set_attr_int(g, "transB", 1);
  b.output("y");
  return b;
}

Result<tuner::TuningLayer> small_cnn_classifier(const engine::Plan& plan) {
  const auto& nodes = plan.graph.nodes;
  const auto fc =
      std::find_if(nodes.begin(), nodes.end(), [](const ir::Node& n) { return n.name == "fc"; });
  if (fc == nodes.end()) return invalid_argument("the plan has no node 'fc'");
  tuner::TuningLayer l{
      tactics::make_layer_spec(plan.graph, *fc), {{2, 4}, {5, 4}, {5}}, {{2, 5}}, {}};
  for (const Tensor* c : l.spec.constants) l.values.push_back(c);
  return l;
}

OnnxBuilder shape_chain_model() {
  OnnxBuilder b;
  b.input("x", 1, {-1, 6}, {"batch", ""});
  b.initializer_i64("zero", {}, {0});
  b.initializer_i64("axes", {1}, {0});
  b.initializer_i64("rest", {2}, {2, 3});
  b.node("Shape", {"x"}, {"s"}, "shape");
  b.node("Gather", {"s", "zero"}, {"n"}, "gather");
  b.node("Unsqueeze", {"n", "axes"}, {"n1"}, "unsqueeze");
  set_attr_int(b.node("Concat", {"n1", "rest"}, {"target"}, "concat"), "axis", 0);
  b.node("Reshape", {"x", "target"}, {"r"}, "reshape");
  b.node("Relu", {"r"}, {"y"}, "relu");
  b.output("y");
  return b;
}

std::shared_ptr<const runtime::Engine> build_engine(const OnnxBuilder& model,
                                                    const engine::BuildOptions& options) {
  auto plan = engine::build_plan(import_model(model), options);
  EXPECT_TRUE(plan.is_ok()) << plan.status().to_string();
  if (!plan.is_ok()) return nullptr;
  auto e = runtime::Engine::create(std::move(plan).value());
  EXPECT_TRUE(e.is_ok()) << e.status().to_string();
  return e.is_ok() ? *e : nullptr;
}

std::vector<Tensor> reference_outputs(const OnnxBuilder& model, const runtime::NamedTensors& in) {
  const ir::Graph g = import_model(model);
  auto exec = runtime::ReferenceExecutor::create(g);
  EXPECT_TRUE(exec.is_ok()) << exec.status().to_string();
  auto out = exec->run(in);
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return out.is_ok() ? *out : std::vector<Tensor>{};
}

Tensor random_f32(Dims dims, uint64_t seed) {
  auto t = io::random_tensor(DType::kF32, dims, seed);
  EXPECT_TRUE(t.is_ok());
  return *t;
}

std::vector<Tensor> run_engine(const runtime::Engine& engine, const runtime::NamedTensors& in) {
  auto ctx = engine.create_execution_context();
  EXPECT_TRUE(ctx.is_ok()) << ctx.status().to_string();
  if (!ctx.is_ok()) return {};
  auto out = (*ctx)->run(in);
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return out.is_ok() ? *out : std::vector<Tensor>{};
}

double cosine(const Tensor& a, const Tensor& b) {
  double ab = 0, aa = 0, bb = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.data<float>()[i], y = b.data<float>()[i];
    ab += x * y, aa += x * x, bb += y * y;
  }
  return ab / std::sqrt(aa * bb);
}

}  // namespace kiln::testing
