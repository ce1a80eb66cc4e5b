// FP16 engines end to end (--fp16): the convolutions and GEMMs store binary16 weights, the engine
// runs them in float32 with the same numerics as the reference on the rounded weights, the file
// stores each weight once at half its bytes, and the engine survives a save and load unchanged.
#include <gtest/gtest.h>

#include <cmath>

#include "base/cpu_features.h"
#include "base/half.h"
#include "engine/builder.h"
#include "engine/engine_test_util.h"
#include "engine/serialize.h"
#include "passes/pass_harness.h"
#include "testing/onnx_builder.h"
#include "testing/tensor_compare.h"

namespace kiln {
namespace {

using testing::OnnxBuilder;

std::vector<float> fp16e_values(int64_t n, uint64_t seed, bool rounded) {
  const Tensor t = testing::random_f32({n}, seed);
  std::vector<float> v(t.data<float>(), t.data<float>() + n);
  for (float& x : v) {
    x *= 0.25f;
    if (rounded) x = static_cast<float>(Half(x));
  }
  return v;
}

// x [1, 8, 16, 16] -> conv1 3x3 s2 + Relu -> conv2 1x1 -> Flatten -> fc (Gemm 1024 x 256) + Relu
// -> proj (MatMul 256 x 64): mostly GEMM weights (~1.1 MB in float32). With `rounded`, every
// weight tensor holds binary16 values (the reference an FP16 engine must match); biases exact.
OnnxBuilder fp16e_model(bool rounded) {
  OnnxBuilder b;
  b.input("x", 1, {1, 8, 16, 16});
  b.initializer("w1", {16, 8, 3, 3}, fp16e_values(16 * 8 * 9, 1, rounded));
  b.initializer("b1", {16}, fp16e_values(16, 2, false));
  b.initializer("w2", {16, 16, 1, 1}, fp16e_values(256, 3, rounded));
  b.initializer("wf", {1024, 256}, fp16e_values(1024 * 256, 4, rounded));
  b.initializer("bf", {256}, fp16e_values(256, 5, false));
  b.initializer("wp", {256, 64}, fp16e_values(256 * 64, 6, rounded));
  auto& c1 = b.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1");
  testing::set_attr_ints(c1, "pads", {1, 1, 1, 1});
  testing::set_attr_ints(c1, "strides", {2, 2});
  b.node("Relu", {"c1"}, {"r1"}, "relu1");
  b.node("Conv", {"r1", "w2"}, {"c2"}, "conv2");
  b.node("Flatten", {"c2"}, {"f"}, "flatten");
  b.node("Gemm", {"f", "wf", "bf"}, {"h"}, "fc");
  b.node("Relu", {"h"}, {"hr"}, "relu2");
  b.node("MatMul", {"hr", "wp"}, {"y"}, "proj");
  b.output("y");
  return b;
}
constexpr int64_t kFp16eWeights = 16 * 8 * 9 + 256 + 1024 * 256 + 256 * 64;

runtime::NamedTensors fp16e_input() { return {{"x", testing::random_f32({1, 8, 16, 16}, 11)}}; }

engine::BuildOptions fp16e_options(bool fp16) {
  engine::BuildOptions o;
  o.optimization_level = 0;
  o.fp16 = fp16;
  return o;
}

std::vector<Tensor> fp16e_run(const runtime::Engine& engine) {
  return testing::run_engine(engine, fp16e_input());
}

const engine::Layer& fp16e_layer(const engine::Plan& plan, const std::string& name) {
  for (size_t n = 0; n < plan.graph.nodes.size(); ++n) {
    for (const std::string& o : plan.graph.nodes[n].origins()) {
      if (o == name) return plan.layers[n];
    }
  }
  ADD_FAILURE() << "no layer " << name;
  return plan.layers.front();
}

TEST(Fp16Engine, LabelsLayersAndMatchesTheRoundedReference) {
  auto fp16 = testing::build_engine(fp16e_model(false), fp16e_options(true));
  const engine::Plan& plan = fp16->plan();
  for (const std::string name : {"conv1", "conv2", "fc", "proj"}) {
    SCOPED_TRACE(name);
    const engine::Layer& l = fp16e_layer(plan, name);
    EXPECT_EQ(l.precision, "fp16");
    EXPECT_NE(l.precision_note.find("weights stored fp16, computed in fp32"), std::string::npos);
  }

  const std::vector<Tensor> got = fp16e_run(*fp16);
  ASSERT_EQ(got.size(), 1u);
  // The same float32 arithmetic on the same (rounded) weights as the reference.
  const auto rounded_ref = testing::reference_outputs(fp16e_model(true), fp16e_input());
  EXPECT_EQ(testing::compare_tensors(got[0], rounded_ref[0], {1e-4, 1e-4}), "");
  // Against float32: only the weight rounding (relative 2^-11 per weight) separates them.
  auto fp32 = testing::build_engine(fp16e_model(false), fp16e_options(false));
  const std::vector<Tensor> want = fp16e_run(*fp32);
  EXPECT_GE(testing::cosine(got[0], want[0]), 0.9999);
  double max_err = 0, max_abs = 0;
  for (int64_t i = 0; i < want[0].numel(); ++i) {
    max_err =
        std::max<double>(max_err, std::abs(got[0].data<float>()[i] - want[0].data<float>()[i]));
    max_abs = std::max<double>(max_abs, std::abs(want[0].data<float>()[i]));
  }
  EXPECT_GT(max_err, 0.0) << "the weights were not rounded";
  EXPECT_LT(max_err, 2e-3 * max_abs);
}

TEST(Fp16Engine, FileStoresTheWeightsOnceAtHalfTheBytes) {
  auto fp32 = testing::build_engine(fp16e_model(false), fp16e_options(false));
  auto fp16 = testing::build_engine(fp16e_model(false), fp16e_options(true));
  auto a = engine::serialize_plan(fp32->plan());
  auto b = engine::serialize_plan(fp16->plan());
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  const double weight_bytes = 4.0 * kFp16eWeights;
  // Half the float32 weight bytes or more saved (float32 engines may also store packed copies).
  EXPECT_GE(static_cast<double>(a->size()) - static_cast<double>(b->size()), 0.45 * weight_bytes);
  // The FP16 file is the binary16 weights once, plus biases, meta and alignment.
  EXPECT_LT(static_cast<double>(b->size()), 0.5 * weight_bytes + 64 * 1024);
}

TEST(Fp16Engine, SaveAndLoadGiveTheSameOutputs) {
  auto fp16 = testing::build_engine(fp16e_model(false), fp16e_options(true));
  testing::TempDir dir;
  const auto path = dir.path() / "fp16.plan";
  ASSERT_TRUE(engine::save_plan(fp16->plan(), path).is_ok());
  auto loaded = engine::load_plan(path);
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  for (size_t i = 0; i < loaded->layers.size(); ++i) {
    EXPECT_EQ(loaded->layers[i].precision, fp16->plan().layers[i].precision);
    EXPECT_EQ(loaded->layers[i].tactic, fp16->plan().layers[i].tactic);
  }
  // The weights come back as the float32 tensors the graph declares, bit for bit.
  const ir::Graph& g = loaded->graph;
  const ir::ValueId wf = g.find_value("wf");
  ASSERT_NE(wf, ir::kNoValue);
  ASSERT_TRUE(g.value(wf).initializer.has_value());
  EXPECT_EQ(g.value(wf).initializer->dtype(), DType::kF32);
  EXPECT_EQ(testing::compare_tensors(
                *g.value(wf).initializer,
                *fp16->plan().graph.value(fp16->plan().graph.find_value("wf")).initializer, {0, 0}),
            "");
  auto reloaded = runtime::Engine::create(std::move(loaded).value());
  ASSERT_TRUE(reloaded.is_ok()) << reloaded.status().to_string();
  EXPECT_EQ(testing::compare_tensors(fp16e_run(**reloaded)[0], fp16e_run(*fp16)[0], {0, 0}), "");
}

// A loaded FP16 engine packs its layers' weights itself (the file holds binary16 weights and no
// packed copies), once for all its contexts, and drops the float32 values only packing read;
// saving it writes the file it was loaded from.
TEST(Fp16Engine, LoadedEnginePacksOnceDropsTheFloatsAndSavesTheSameFile) {
  auto fp16 = testing::build_engine(fp16e_model(false), fp16e_options(true));
  auto file = engine::serialize_plan(fp16->plan());
  ASSERT_TRUE(file.is_ok()) << file.status().to_string();
  testing::TempDir dir;
  const auto path = dir.path() / "fp16.plan";
  ASSERT_TRUE(engine::save_plan(fp16->plan(), path).is_ok());
  auto loaded = engine::load_plan(path);
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  auto engine = runtime::Engine::create(std::move(loaded).value());
  ASSERT_TRUE(engine.is_ok()) << engine.status().to_string();
  const engine::Plan& plan = (*engine)->plan();
  int packed_at_load = 0;
  for (size_t n = 0; n < plan.layers.size(); ++n) {
    const engine::Layer& l = plan.layers[n];
    if (!l.packed_at_load) continue;
    ++packed_at_load;
    EXPECT_EQ(l.precision, "fp16");
    EXPECT_TRUE(l.packed.defined());
    EXPECT_EQ((*engine)->spec(n).prepacked, &l.packed);
    const ir::Value& w = plan.graph.value(plan.graph.nodes[n].inputs[1]);
    EXPECT_EQ(w.initializer->raw_data(), nullptr) << w.name << " kept its float32 values";
    EXPECT_EQ(w.initializer->dims(), w.desc.static_dims());
  }
  // kiln's x86 convolution and GEMM tactics pack; under KILN_MAX_ISA=sse4_2 the portable ones,
  // which do not, run every layer and only the save is checked.
  if (has_feature(host_cpu_features(), CpuFeature::kAvx2)) {
    EXPECT_GT(packed_at_load, 0) << "no FP16 layer's tactic packs: the test checks nothing";
  }
  // Two contexts share the packed weights and give the engine's outputs, bit for bit.
  const std::vector<Tensor> want = fp16e_run(*fp16);
  EXPECT_EQ(testing::compare_tensors(fp16e_run(**engine)[0], want[0], {0, 0}), "");
  EXPECT_EQ(testing::compare_tensors(fp16e_run(**engine)[0], want[0], {0, 0}), "");
  auto again = engine::serialize_plan(plan);
  ASSERT_TRUE(again.is_ok()) << again.status().to_string();
  EXPECT_EQ(*again, *file) << "saving the loaded engine wrote another file";
}

TEST(Fp16Engine, LayerPrecisionsKeepALayerFp32) {
  engine::BuildOptions o = fp16e_options(true);
  o.layer_precisions = {{"fc", "fp32"}, {"proj", "fp16"}};
  o.precision_constraints = quant::PrecisionConstraints::kObey;
  auto e = testing::build_engine(fp16e_model(false), o);
  const engine::Plan& plan = e->plan();
  EXPECT_EQ(fp16e_layer(plan, "fc").precision, "fp32");
  EXPECT_EQ(fp16e_layer(plan, "fc").precision_note, "fp32: --layerPrecisions ('fc')");
  EXPECT_EQ(fp16e_layer(plan, "proj").precision, "fp16");
  EXPECT_EQ(fp16e_layer(plan, "conv1").precision, "fp16");
  // fc's weights stay exact.
  const OnnxBuilder m = fp16e_model(false);
  const std::vector<float> wf = fp16e_values(1024 * 256, 4, false);
  const ir::Value& v = plan.graph.value(plan.graph.find_value("wf"));
  ASSERT_TRUE(v.initializer.has_value());
  EXPECT_EQ(v.initializer->data<float>()[1], wf[1]);
  EXPECT_EQ(v.initializer->data<float>()[12345], wf[12345]);

  // Without --fp16, an fp16 request cannot be met: obey fails, naming the flag.
  o.fp16 = false;
  auto failed = engine::build_plan(testing::import_model(m), o);
  ASSERT_FALSE(failed.is_ok());
  EXPECT_NE(failed.status().message().find("has no --fp16"), std::string::npos);
}

// --best: INT8 where a layer can take it, FP16 weights for the rest.
TEST(Fp16Engine, BestIsInt8ThenFp16) {
  engine::BuildOptions o = fp16e_options(true);
  o.int8 = true;  // placeholder ranges: speed only, but every layer's precision is decided
  o.layer_precisions = {{"proj", "fp16"}};
  o.precision_constraints = quant::PrecisionConstraints::kObey;
  auto e = testing::build_engine(fp16e_model(false), o);
  const engine::Plan& plan = e->plan();
  EXPECT_EQ(fp16e_layer(plan, "conv1").precision, "int8");
  EXPECT_EQ(fp16e_layer(plan, "fc").precision, "int8");
  EXPECT_EQ(fp16e_layer(plan, "proj").precision, "fp16");
  EXPECT_EQ(fp16e_layer(plan, "proj").precision_note.rfind("fp16: weights stored fp16", 0), 0u);
}

}  // namespace
}  // namespace kiln
