#include "engine/builder.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/cpu_features.h"
#include "engine/engine_test_util.h"
#include "engine/serialize.h"
#include "engine/shape_resolver.h"
#include "passes/pass_harness.h"
#include "tactics/tactic.h"
#include "testing/onnx_builder.h"
#include "testing/tensor_compare.h"

namespace kiln {
namespace {

using testing::import_model;

engine::BuildOptions batch_profile(int64_t lo, int64_t opt, int64_t hi) {
  engine::BuildOptions o;
  o.profiles.push_back({{"x", ShapeRange{{lo, 3, 8, 8}, {opt, 3, 8, 8}, {hi, 3, 8, 8}}}});
  return o;
}

TEST(Builder, StaticModelRunsLikeTheReference) {
  const auto model = testing::small_cnn(false);
  auto engine = testing::build_engine(model);
  ASSERT_NE(engine, nullptr);
  const Tensor x = testing::random_f32({2, 3, 8, 8}, 7);
  auto ctx = engine->create_execution_context();
  ASSERT_TRUE(ctx.is_ok()) << ctx.status().to_string();
  auto got = (*ctx)->run({{"x", x}});
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  const auto want = testing::reference_outputs(model, {{"x", x}});
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ(testing::compare_tensors((*got)[0], want[0], {1e-5, 1e-6}), "");
}

TEST(Builder, DefaultProfileSetsDynamicDimsToOneWithAWarning) {
  auto plan = engine::build_plan(import_model(testing::small_cnn(true)), {});
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  ASSERT_EQ(plan->profiles.size(), 1u);
  EXPECT_EQ(plan->profiles[0].inputs[0].max, (Dims{1, 3, 8, 8}));
  bool warned = false;
  for (const std::string& line : plan->build_log) warned |= line.find("warning: input 'x'") == 0;
  EXPECT_TRUE(warned);
}

TEST(Builder, ProfileErrorsNameTheInput) {
  const ir::Graph g = import_model(testing::small_cnn(true));
  auto expect_error = [&](engine::BuildOptions o, std::string_view needle) {
    auto plan = engine::build_plan(g, o);
    ASSERT_FALSE(plan.is_ok());
    EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(plan.status().message().find(needle), std::string::npos) << plan.status().message();
  };
  expect_error(batch_profile(4, 2, 8), "min <= opt <= max");
  engine::BuildOptions rank;
  rank.profiles.push_back({{"x", ShapeRange{{1, 3, 8}, {1, 3, 8}, {1, 3, 8}}}});
  expect_error(rank, "input 'x'");
  engine::BuildOptions fixed_dim;
  fixed_dim.profiles.push_back({{"x", ShapeRange{{1, 4, 8, 8}, {1, 4, 8, 8}, {1, 4, 8, 8}}}});
  expect_error(fixed_dim, "does not fit");
  engine::BuildOptions unknown = batch_profile(1, 1, 2);
  unknown.profiles[0]["y"] = ShapeRange{{1}, {1}, {1}};
  expect_error(unknown, "'y', which is not an input");
  engine::BuildOptions missing;
  missing.profiles.push_back({});
  expect_error(missing, "must give its min/opt/max");
}

TEST(Builder, UnknownPassNameIsAnError) {
  engine::BuildOptions o;
  o.passes.disabled = {"no_such_pass"};
  auto plan = engine::build_plan(import_model(testing::small_cnn(false)), o);
  ASSERT_FALSE(plan.is_ok());
  EXPECT_NE(plan.status().message().find("unknown pass 'no_such_pass'"), std::string::npos);
}

TEST(Builder, ShapeChainBecomesShapeLayers) {
  const auto model = testing::shape_chain_model();
  engine::BuildOptions o;
  o.profiles.push_back({{"x", ShapeRange{{1, 6}, {2, 6}, {8, 6}}}});
  auto plan = engine::build_plan(import_model(model), o);
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  std::vector<std::string> run_ops;
  for (size_t n = 0; n < plan->layers.size(); ++n) {
    if (plan->layers[n].kind == engine::LayerKind::kRun) {
      run_ops.push_back(plan->graph.nodes[n].op_type);
    }
  }
  EXPECT_EQ(run_ops, (std::vector<std::string>{"Reshape", "Relu"}));
}

size_t shape_layers(const engine::Plan& plan) {
  return static_cast<size_t>(std::count_if(plan.layers.begin(), plan.layers.end(), [](auto& l) {
    return l.kind == engine::LayerKind::kShape;
  }));
}

TEST(Builder, ADynamicProfileKeepsTheSymbolThroughAShapeChain) {
  engine::BuildOptions o;
  o.profiles.push_back({{"x", ShapeRange{{1, 6}, {2, 6}, {8, 6}}}});
  auto plan = engine::build_plan(import_model(testing::shape_chain_model()), o);
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  EXPECT_EQ(shape_layers(*plan), 4u);  // Shape, Gather, Unsqueeze, Concat
  const ir::ValueId r = plan->graph.find_value("r");
  ASSERT_NE(r, ir::kNoValue);
  EXPECT_EQ(plan->graph.value(r).desc.to_string(), "float32[batch,2,3]");
}

TEST(Builder, AProfileThatFixesEveryInputSpecializesTheGraph) {
  for (const bool given : {false, true}) {  // the default profile, or one from --shapes
    engine::BuildOptions o;
    if (given) o.profiles.push_back({{"x", ShapeRange{{4, 6}, {4, 6}, {4, 6}}}});
    auto plan = engine::build_plan(import_model(testing::shape_chain_model()), o);
    ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
    const int64_t batch = given ? 4 : 1;
    EXPECT_EQ(shape_layers(*plan), 0u);
    EXPECT_EQ(plan->graph.value(plan->graph.inputs[0]).desc.to_string(),
              fmt::format("float32[{},6]", batch));
    EXPECT_EQ(plan->graph.value(plan->graph.find_value("r")).desc.to_string(),
              fmt::format("float32[{},2,3]", batch));
    bool logged = false;
    for (const std::string& line : plan->build_log) {
      logged |= line.find(fmt::format("built for them: 'x' float32[batch,6] -> {}x6", batch)) !=
                std::string::npos;
    }
    EXPECT_TRUE(logged);
  }
}

TEST(Builder, DataDependentShapesAreRefused) {
  testing::OnnxBuilder b;
  b.input("x", 1, {4});
  b.node("NonZero", {"x"}, {"y"}, "nz");
  b.output("y");
  auto plan = engine::build_plan(import_model(b), {});
  ASSERT_FALSE(plan.is_ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(plan.status().message().find("node 'nz' (NonZero)"), std::string::npos)
      << plan.status().message();
}

TEST(Builder, MemoryPlanSharesBuffers) {
  auto plan = engine::build_plan(import_model(testing::small_cnn(true)), batch_profile(1, 2, 4));
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  const engine::MemoryLayout& m = plan->profiles[0].memory;
  EXPECT_GT(m.arena_bytes, 0);
  EXPECT_LE(m.peak_live_bytes, m.arena_bytes);
  EXPECT_LE(m.arena_bytes, m.no_reuse_bytes);
  // Planned at the max batch: the largest activation is a 4x4x8x8 float tensor.
  int64_t largest = 0;
  for (int64_t b : m.bytes) largest = std::max(largest, b);
  EXPECT_EQ(largest, 4 * 4 * 8 * 8 * 4);
}

// x -> Conv 3x3 + Relu (r1) -> Conv 1x1 + Relu (a1) -> Conv 1x1 (c2) -> Add r1 -> Relu (s) ->
// GlobalAveragePool -> y, the last conv fused with the add as kiln.FusedConv with residual r1.
// With `read_later`, r1 is read again after the add (Mul(s, r1) feeds the pool).
std::vector<float> residual_model_weights(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.9f * static_cast<float>(i) + 0.2f);
  return v;
}

testing::OnnxBuilder residual_model(bool read_later) {
  testing::OnnxBuilder b;
  b.input("x", 1, {1, 3, 9, 9});
  b.initializer("w1", {8, 3, 3, 3}, residual_model_weights(216, 0.3f));
  b.initializer("wa", {8, 8, 1, 1}, residual_model_weights(64, 0.5f));
  b.initializer("wb", {8, 8, 1, 1}, residual_model_weights(64, 0.4f));
  testing::set_attr_ints(b.node("Conv", {"x", "w1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  b.node("Relu", {"c1"}, {"r1"}, "relu1");
  b.node("Conv", {"r1", "wa"}, {"ca"}, "conva");
  b.node("Relu", {"ca"}, {"a1"}, "relua");
  b.node("Conv", {"a1", "wb"}, {"c2"}, "convb");
  b.node("Add", {"c2", "r1"}, {"sum"}, "add");
  b.node("Relu", {"sum"}, {"s"}, "relus");
  if (read_later) b.node("Mul", {"s", "r1"}, {"m"}, "mul");
  b.node("GlobalAveragePool", {read_later ? "m" : "s"}, {"y"}, "pool");
  b.output("y");
  return b;
}

// The fused layer's residual and output share bytes exactly when the residual dies there and the
// layer's tactic runs in place; the engine computes the same either way. With the blocked layout
// (nchw16c_layout) the 1x1 layers read r1's blocked twin, which dies at the add even when r1 itself
// is read later.
TEST(Builder, ResidualThatDiesAtItsLayerHostsTheOutput) {
  for (bool blocked : {false, true}) {
    for (bool read_later : {false, true}) {
      SCOPED_TRACE(::testing::Message() << (read_later ? "residual read later" : "residual dies")
                                        << (blocked ? ", blocked" : ", NCHW"));
      const auto model = residual_model(read_later);
      engine::BuildOptions options;
      options.optimization_level = 0;  // the first applicable tactic: no timing
      if (!blocked) options.passes.disabled = {"nchw16c_layout"};
      auto plan = engine::build_plan(import_model(model), options);
      ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
      const ir::Graph& g = plan->graph;
      const std::string op = blocked ? "ConvNchw16c" : "FusedConv";
      size_t fused = g.nodes.size();
      for (size_t n = 0; n < g.nodes.size(); ++n) {
        if (g.nodes[n].op_type == op && g.nodes[n].inputs.size() > 3 &&
            g.nodes[n].inputs[3] != ir::kNoValue) {
          fused = n;
        }
      }
      if (blocked && fused == g.nodes.size() && (host_cpu_features() & kIsaAvx2) != kIsaAvx2) {
        continue;  // no blocked kernels under this ISA cap: the pass leaves the graph NCHW
      }
      ASSERT_LT(fused, g.nodes.size()) << "no " << op << " with a residual";
      const tactics::Tactic* tactic = tactics::find_tactic(plan->layers[fused].tactic);
      ASSERT_NE(tactic, nullptr);
      const std::vector<int64_t>& offsets = plan->profiles[0].memory.offsets;
      const auto r = static_cast<size_t>(g.nodes[fused].inputs[3]);
      const auto y = static_cast<size_t>(g.nodes[fused].outputs[0]);
      EXPECT_EQ(offsets[r] == offsets[y], (blocked || !read_later) && tactic->residual_in_place())
          << plan->layers[fused].tactic;

      auto engine = testing::build_engine(model, options);
      ASSERT_NE(engine, nullptr);
      const Tensor x = testing::random_f32({1, 3, 9, 9}, 3);
      const std::vector<Tensor> got = testing::run_engine(*engine, {{"x", x}});
      ASSERT_EQ(got.size(), 1u);
      const auto want = testing::reference_outputs(model, {{"x", x}});
      EXPECT_EQ(testing::compare_tensors(got[0], want[0], {1e-4, 1e-5}), "");
    }
  }
}

// x -> Relu -> r -> Reshape [1, 6, 2, 4] -> s -> Relu -> y; r also read after the reshape
// (Add(y, r')) when read_later.
testing::OnnxBuilder reshape_model(bool read_later) {
  testing::OnnxBuilder b;
  b.input("x", 1, {1, 3, 4, 4});
  b.initializer_i64("shape", {4}, {1, 6, 2, 4});
  b.node("Relu", {"x"}, {"r"}, "relu0");
  b.node("Reshape", {"r", "shape"}, {"s"}, "reshape");
  b.node("Relu", {"s"}, {read_later ? "t" : "y"}, "relu1");
  if (read_later) {
    b.node("Reshape", {"r", "shape"}, {"r2"}, "reshape2");
    b.node("Add", {"t", "r2"}, {"y"}, "add");
  }
  b.output("y");
  return b;
}

// A reshape's output takes its input's bytes (no copy) exactly when the input dies there.
TEST(Builder, AReshapeTakesItsInputsBytesWhenTheInputDiesThere) {
  for (bool read_later : {false, true}) {
    SCOPED_TRACE(read_later ? "input read later" : "input dies");
    const auto model = reshape_model(read_later);
    auto plan = engine::build_plan(import_model(model), {});
    ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
    const ir::Graph& g = plan->graph;
    size_t reshape = g.nodes.size();
    for (size_t n = 0; n < g.nodes.size(); ++n) {
      if (g.nodes[n].name == "reshape") reshape = n;
    }
    ASSERT_LT(reshape, g.nodes.size());
    const tactics::Tactic* tactic = tactics::find_tactic(plan->layers[reshape].tactic);
    ASSERT_NE(tactic, nullptr);
    EXPECT_TRUE(tactic->output_is_input()) << tactic->name();
    const std::vector<int64_t>& offsets = plan->profiles[0].memory.offsets;
    const auto r = static_cast<size_t>(g.nodes[reshape].inputs[0]);
    const auto s = static_cast<size_t>(g.nodes[reshape].outputs[0]);
    EXPECT_EQ(offsets[r] == offsets[s], !read_later);

    auto engine = testing::build_engine(model, {});
    ASSERT_NE(engine, nullptr);
    const Tensor x = testing::random_f32({1, 3, 4, 4}, 4);
    const std::vector<Tensor> got = testing::run_engine(*engine, {{"x", x}});
    ASSERT_EQ(got.size(), 1u);
    const auto want = testing::reference_outputs(model, {{"x", x}});
    EXPECT_EQ(testing::compare_tensors(got[0], want[0], {0, 0}), "");
  }
}

// Dense 3x3 layers of whole 16-channel blocks run blocked only where an enabled tactic takes them
// (kiln's dense kernel; oneDNN's nChw16c primitives on AVX-512): with both sources disabled the
// layout pass asks the tactics, finds none, and leaves them NCHW.
TEST(Builder, TheLayoutPassBlocksOnlyLayersAnEnabledTacticRuns) {
  if ((host_cpu_features() & kIsaAvx2) != kIsaAvx2) GTEST_SKIP() << "no AVX2";
  testing::OnnxBuilder b;
  b.input("x", 1, {1, 16, 6, 6});
  b.initializer("w1", {16, 16, 3, 3}, residual_model_weights(2304, 0.1f));
  b.initializer("w2", {16, 16, 3, 3}, residual_model_weights(2304, 0.2f));
  testing::set_attr_ints(b.node("Conv", {"x", "w1"}, {"a"}, "conv1"), "pads", {1, 1, 1, 1});
  testing::set_attr_ints(b.node("Conv", {"a", "w2"}, {"y"}, "conv2"), "pads", {1, 1, 1, 1});
  b.output("y");
  const auto blocked_layers = [&](std::vector<std::string> sources) {
    engine::BuildOptions options;
    options.optimization_level = 0;
    options.tactic_sources = std::move(sources);
    auto plan = engine::build_plan(import_model(b), options);
    EXPECT_TRUE(plan.is_ok()) << plan.status().to_string();
    int n = 0;
    for (const ir::Node& node : plan->graph.nodes) n += node.op_type == "ConvNchw16c";
    return n;
  };
  // kiln's own blocked kernels (AVX2 and AVX-512) and oneDNN's (AVX-512) each run both layers.
  EXPECT_EQ(blocked_layers({}), 2);
  EXPECT_EQ(blocked_layers({"-onednn"}), 2);
  if ((host_cpu_features() & kIsaAvx512) == kIsaAvx512) {
    EXPECT_EQ(blocked_layers({"-kiln"}), 2);
  }
  EXPECT_EQ(blocked_layers({"-onednn", "-kiln"}), 0);
}

// The builder packs the chosen tactics' weights on its threads, layers shared out largest first:
// the engine holds the same bytes as when one thread packs them all.
TEST(Builder, WeightsPackedOnSeveralThreadsMatchOneThread) {
  testing::OnnxBuilder b;
  b.input("x", 1, {1, 16, 6, 6});
  std::string in = "x";
  for (int i = 0; i < 5; ++i) {
    const int64_t k = i % 2 == 0 ? 3 : 1;
    const std::string w = fmt::format("w{}", i), y = fmt::format("y{}", i);
    b.initializer(w, {16, 16, k, k},
                  residual_model_weights(static_cast<size_t>(256 * k * k), 0.1f * (i + 1)));
    auto& conv = b.node("Conv", {in, w}, {y}, fmt::format("conv{}", i));
    if (k == 3) testing::set_attr_ints(conv, "pads", {1, 1, 1, 1});
    in = y;
  }
  b.output(in);
  const auto build = [&](int threads) {
    engine::BuildOptions options;
    options.optimization_level = 0;  // the same tactics whatever the timings
    options.threads = threads;
    auto plan = engine::build_plan(import_model(b), options);
    EXPECT_TRUE(plan.is_ok()) << plan.status().to_string();
    return std::move(plan).value();
  };
  const engine::Plan one = build(1);
  const engine::Plan three = build(3);
  ASSERT_EQ(one.layers.size(), three.layers.size());
  int packed = 0;
  for (size_t n = 0; n < one.layers.size(); ++n) {
    const Tensor& a = one.layers[n].packed;
    const Tensor& c = three.layers[n].packed;
    EXPECT_EQ(one.layers[n].tactic, three.layers[n].tactic) << n;
    ASSERT_EQ(a.defined(), c.defined()) << n;
    if (!a.defined()) continue;
    ++packed;
    ASSERT_EQ(a.nbytes(), c.nbytes()) << n;
    EXPECT_EQ(std::memcmp(a.raw_data(), c.raw_data(), a.nbytes()), 0) << one.layers[n].tactic;
  }
  if ((host_cpu_features() & kIsaAvx2) == kIsaAvx2) {
    EXPECT_GE(packed, 5);
  }
}

// An image's first layer (3 channels) reads its input as NCHW and writes a blocked output for the
// layers after it: no reorder in, and the engine computes what the model does.
TEST(Builder, AFirstLayerOfFewChannelsWritesTheBlockedLayoutItself) {
  if ((host_cpu_features() & kIsaAvx512) != kIsaAvx512) GTEST_SKIP() << "no AVX-512";
  testing::OnnxBuilder b;
  b.input("x", 1, {1, 3, 12, 12});
  b.initializer("w1", {16, 3, 3, 3}, residual_model_weights(432, 0.3f));
  b.initializer("w2", {16, 1, 3, 3}, residual_model_weights(144, 0.5f));
  auto& stem = b.node("Conv", {"x", "w1"}, {"a"}, "stem");
  testing::set_attr_ints(stem, "pads", {1, 1, 1, 1});
  testing::set_attr_ints(stem, "strides", {2, 2});
  auto& dw = b.node("Conv", {"a", "w2"}, {"y"}, "dw");
  testing::set_attr_ints(dw, "pads", {1, 1, 1, 1});
  testing::set_attr_int(dw, "group", 16);
  b.output("y");
  engine::BuildOptions options;
  options.optimization_level = 0;
  auto plan = engine::build_plan(import_model(b), options);
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  std::vector<std::string> ops;
  for (const ir::Node& n : plan->graph.nodes) ops.push_back(n.op_type);
  EXPECT_EQ(ops, (std::vector<std::string>{"ConvNchw16c", "ConvNchw16c", "FromNchw16c"}));
  EXPECT_EQ(plan->graph.nodes[0].attrs.get_string("x_layout", ""), "nchw");
  auto engine = testing::build_engine(b, options);
  ASSERT_NE(engine, nullptr);
  const Tensor x = testing::random_f32({1, 3, 12, 12}, 8);
  const std::vector<Tensor> got = testing::run_engine(*engine, {{"x", x}});
  const auto want = testing::reference_outputs(b, {{"x", x}});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(testing::compare_tensors(got[0], want[0], {1e-4, 1e-5}), "");
}

// A hand-built graph whose fused output value was created before its residual (passes may append
// values): x -> conv0 -> r -> conv1 -> t -> conv2 -> a -> conv3 (+ r, in place) -> s -> pool -> y,
// value ids s < t < a < r. The merged request must live from r's first step, not s's: t, made
// after r and dead before s, must not get r's bytes.
TEST(Builder, AHostedOutputWithTheSmallerIdKeepsItsResidualsLifetime) {
  ir::Graph g;
  g.opset_imports = {{"", 17}, {"kiln", 1}};
  const auto f32 = [](Dims d) { return ir::TensorDesc::of_dims(DType::kF32, std::move(d)); };
  const ir::ValueId x = g.add_value("x", f32({1, 8, 6, 6}));
  g.value(x).is_graph_input = true;
  g.inputs.push_back(x);
  std::vector<ir::ValueId> w;
  for (int i = 0; i < 4; ++i) {
    w.push_back(g.add_value("w" + std::to_string(i), f32({8, 8, 1, 1})));
    g.value(w.back()).initializer = testing::random_f32({8, 8, 1, 1}, 10 + i);
  }
  const ir::ValueId s = g.add_value("s"), t = g.add_value("t"), a = g.add_value("a");
  const ir::ValueId r = g.add_value("r"), y = g.add_value("y");
  const auto conv = [&](const std::string& name, std::vector<ir::ValueId> in, ir::ValueId out) {
    ir::Node n{.name = name,
               .op_type = "FusedConv",
               .domain = "kiln",
               .inputs = std::move(in),
               .outputs = {out}};
    n.attrs.set("kernel_shape", std::vector<int64_t>{1, 1});
    n.attrs.set("activation", std::string("Relu"));
    g.nodes.push_back(std::move(n));
  };
  conv("conv0", {x, w[0]}, r);
  conv("conv1", {r, w[1]}, t);
  conv("conv2", {t, w[2]}, a);
  conv("conv3", {a, w[3], ir::kNoValue, r}, s);
  g.nodes.push_back(
      ir::Node{.name = "pool", .op_type = "GlobalAveragePool", .inputs = {s}, .outputs = {y}});
  g.value(y).is_graph_output = true;
  g.outputs.push_back(y);
  for (ir::Node& n : g.nodes) n.opset = n.domain.empty() ? 17 : 1;
  engine::BuildOptions options;
  options.optimization_level = 0;
  options.passes.disabled = {"nchw16c_layout"};  // keeps the value ids this test is about
  auto plan = engine::build_plan(std::move(g), options);
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  const tactics::Tactic* tactic = tactics::find_tactic(plan->layers[3].tactic);
  ASSERT_NE(tactic, nullptr);
  if (!tactic->residual_in_place()) GTEST_SKIP() << plan->layers[3].tactic << " runs out of place";
  const engine::MemoryLayout& m = plan->profiles[0].memory;
  const auto at = [&](ir::ValueId v) { return m.offsets[static_cast<size_t>(v)]; };
  const auto size = [&](ir::ValueId v) { return m.bytes[static_cast<size_t>(v)]; };
  ASSERT_EQ(at(s), at(r));
  EXPECT_TRUE(at(t) + size(t) <= at(r) || at(r) + size(r) <= at(t))
      << "t at " << at(t) << " overlaps r at " << at(r);
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// An engine whose tactics need a CPU feature this machine lacks is refused at load, naming it.
// (This machine has no AMX; kiln's own tactics will set such bits for the kernels they use.)
TEST(EngineFile, MissingCpuFeatureIsNamedAtLoad) {
  auto plan = engine::build_plan(testing::import_model(testing::small_cnn(false)), {});
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  if (has_feature(host_cpu_features(), CpuFeature::kAmxTile)) GTEST_SKIP() << "this CPU has AMX";
  plan->required_features = to_set(CpuFeature::kAmxTile);
  testing::TempDir dir;
  const auto path = dir.path() / "amx.plan";
  ASSERT_TRUE(engine::save_plan(*plan, path).is_ok());
  auto loaded = engine::load_plan(path);
  ASSERT_FALSE(loaded.is_ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(loaded.status().message().find("amx_tile"), std::string::npos)
      << loaded.status().message();
  // inspect reads it anyway.
  EXPECT_TRUE(engine::load_plan(path, {.check_cpu = false}).is_ok());
}

TEST(EngineFile, RoundTripKeepsEverything) {
  auto plan = engine::build_plan(testing::import_model(testing::small_cnn(true)), {});
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  testing::TempDir dir;
  const auto path = dir.path() / "m.plan";
  ASSERT_TRUE(engine::save_plan(*plan, path).is_ok());
  auto loaded = engine::load_plan(path);
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  EXPECT_EQ(loaded->graph.dump(), plan->graph.dump());
  ASSERT_EQ(loaded->layers.size(), plan->layers.size());
  for (size_t i = 0; i < plan->layers.size(); ++i) {
    EXPECT_EQ(loaded->layers[i].tactic, plan->layers[i].tactic);
    ASSERT_EQ(loaded->layers[i].candidates.size(), plan->layers[i].candidates.size());
    for (size_t c = 0; c < plan->layers[i].candidates.size(); ++c) {
      EXPECT_EQ(loaded->layers[i].candidates[c].tactic, plan->layers[i].candidates[c].tactic);
      EXPECT_EQ(loaded->layers[i].candidates[c].ms, plan->layers[i].candidates[c].ms);
      EXPECT_EQ(loaded->layers[i].candidates[c].note, plan->layers[i].candidates[c].note);
    }
    EXPECT_EQ(loaded->graph.nodes[i].fused_from, plan->graph.nodes[i].fused_from);
  }
  EXPECT_EQ(loaded->profiles[0].memory.offsets, plan->profiles[0].memory.offsets);
  EXPECT_EQ(loaded->build_log, plan->build_log);
  // Weights are used in place: 64-byte aligned inside the mapping.
  for (const ir::Value& v : loaded->graph.values) {
    if (v.initializer) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(v.initializer->raw_data()) % 64, 0u) << v.name;
    }
  }
}

}  // namespace
}  // namespace kiln
