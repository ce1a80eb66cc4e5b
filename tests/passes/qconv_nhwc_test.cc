#include "passes/qconv_nhwc.h"

#include <gtest/gtest.h>

#include "base/cpu_features.h"
#include "fusion_test_util.h"
#include "io/random_input.h"
#include "ops/infer_graph.h"
#include "pass_harness.h"
#include "tactics/tactic.h"

namespace kiln {
namespace qconv_nhwc_test {

using testing::op_types;
using Ops = std::vector<std::string>;

// The builder's question (engine/builder.cc's blocked_conv_check): a tactic of this host runs it.
bool host_runs(const ir::Graph& g, const ir::Node& n) {
  const tactics::LayerSpec spec = tactics::make_layer_spec(g, n);
  for (const tactics::Tactic* t : tactics::tactics_for(n.domain, n.op_type)) {
    if ((t->required_features() & ~host_cpu_features()) == 0 && t->why_not(spec).empty()) {
      return true;
    }
  }
  return false;
}

#define KILN_REQUIRE_ONEDNN_QCONV()                                               \
  if ((host_cpu_features() & kIsaAvx512Vnni) != kIsaAvx512Vnni) {                 \
    GTEST_SKIP() << "onednn.qconv_nhwc.u8s8 is for hosts with AVX-512 VNNI only"; \
  }

struct Builder {
  ir::Graph g;
  uint64_t seed = 1;

  ir::ValueId constant(const std::string& name, Tensor t) {
    const ir::ValueId v = g.add_value(name, ir::TensorDesc::of_dims(t.dtype(), t.dims()));
    g.value(v).initializer = std::move(t);
    return v;
  }
  ir::ValueId input(const std::string& name, Dims dims) {
    const ir::ValueId v = g.add_value(name, ir::TensorDesc::of_dims(DType::kU8, dims));
    g.value(v).is_graph_input = true;
    g.inputs.push_back(v);
    return v;
  }
  // A 3x3 (or 1x1) uint8 -> uint8 QConv with ReLU; z: a uint8 residual of Y's shape.
  ir::ValueId qconv(const std::string& name, ir::ValueId x, int64_t cin, int64_t cout, int64_t k,
                    ir::ValueId z = ir::kNoValue, bool float_out = false) {
    Tensor w = *io::random_tensor(DType::kI8, {cout, cin, k, k}, ++seed);
    Tensor s(DType::kF32, {cout});
    for (float& v : s.span<float>()) v = 2e-3f;
    const ir::ValueId y = g.add_value(name + "_y");
    ir::Node n{.name = name,
               .op_type = "QConv",
               .domain = "kiln",
               .inputs = {x, constant(name + "_w", std::move(w)), constant(name + "_s", s),
                          constant(name + "_b", *io::random_tensor(DType::kF32, {cout}, ++seed))},
               .outputs = {y}};
    if (z != ir::kNoValue) n.inputs.push_back(z);
    n.opset = 1;
    n.attrs.set("kernel_shape", std::vector<int64_t>{k, k});
    n.attrs.set("pads", std::vector<int64_t>(4, k / 2));
    n.attrs.set("x_scale", 0.05f);
    n.attrs.set("x_zero_point", int64_t{0});
    if (!float_out) {
      n.attrs.set("output_type", int64_t{2});
      n.attrs.set("y_scale", 0.05f);
      n.attrs.set("y_zero_point", int64_t{0});
    }
    if (z != ir::kNoValue) {
      n.attrs.set("z_scale", 0.05f);
      n.attrs.set("z_zero_point", int64_t{0});
    }
    n.attrs.set("activation", std::string("Relu"));
    g.nodes.push_back(std::move(n));
    return y;
  }
  ir::Graph finish(std::initializer_list<ir::ValueId> outputs) {
    for (ir::ValueId v : outputs) {
      g.value(v).is_graph_output = true;
      g.outputs.push_back(v);
    }
    g.opset_imports = {{"", 17}, {"kiln", 1}};
    EXPECT_TRUE(ops::infer_graph_shapes(g).is_ok());
    return g;
  }
};

ir::Graph run(const ir::Graph& before, passes::PassLog& log) {
  return testing::run_passes(before, {&passes::qconv_nhwc_pass()}, log, host_runs);
}

size_t count(const Ops& ops, const std::string& op) {
  return static_cast<size_t>(std::count(ops.begin(), ops.end(), op));
}

// `blocks` bottleneck blocks: x -> a (1x1) -> b (3x3) -> c (1x1, + x) -> the next block's x, and a
// MaxPool on the last output.
ir::Graph block(bool pool_after, int blocks = 3) {
  Builder b;
  ir::ValueId y = b.input("x", {1, 16, 7, 9});
  for (int i = 0; i < blocks; ++i) {
    const std::string s = i + 1 == blocks ? "" : std::to_string(i);
    const ir::ValueId a = b.qconv("a" + s, y, 16, 8, 1);
    const ir::ValueId m = b.qconv("b" + s, a, 8, 8, 3);
    y = b.qconv("c" + s, m, 8, 16, 1, y);
  }
  if (!pool_after) return b.finish({y});
  const ir::ValueId p = b.g.add_value("p");
  ir::Node pool{.name = "pool", .op_type = "MaxPool", .inputs = {y}, .outputs = {p}};
  pool.opset = 17;
  pool.attrs.set("kernel_shape", std::vector<int64_t>{2, 2});
  b.g.nodes.push_back(std::move(pool));
  return b.finish({p});
}

TEST(QConvNhwc, AChainRunsChannelsLastBetweenTwoTransposes) {
  KILN_REQUIRE_ONEDNN_QCONV();
  passes::PassLog log;
  const ir::Graph before = block(/*pool_after=*/true);
  const ir::Graph after = run(before, log);
  const Ops ops = op_types(after);
  EXPECT_EQ(ops.front(), "Transpose") << after.dump();
  EXPECT_EQ(count(ops, "kiln.QConvNhwc"), 9u) << after.dump();
  // The uint8 max pool after the chain joins it; its output, the graph's, goes back to NCHW.
  EXPECT_EQ((Ops{ops.end() - 2, ops.end()}), (Ops{"kiln.MaxPoolNhwc", "Transpose"}))
      << after.dump();
  // x is transposed once for both of its readers (a0's X and c0's residual).
  EXPECT_EQ(log.entries().back().message,
            "9 INT8 convolutions and 1 max pools run channels-last; 1 transposes in, 1 out");
  testing::expect_same_outputs(before, after, {}, {0, 0});
}

TEST(QConvNhwc, AGraphOutputIsTransposedBack) {
  KILN_REQUIRE_ONEDNN_QCONV();
  passes::PassLog log;
  const ir::Graph before = block(/*pool_after=*/false);
  const ir::Graph after = run(before, log);
  EXPECT_EQ(count(op_types(after), "Transpose"), 2u) << after.dump();
  EXPECT_NE(after.find_value("c_y"), ir::kNoValue);  // the output keeps its name
  testing::expect_same_outputs(before, after, {}, {0, 0});
}

TEST(QConvNhwc, AChainWithFewerThanFourConvolutionsPerTransposeStaysNchw) {
  KILN_REQUIRE_ONEDNN_QCONV();
  passes::PassLog log;
  const ir::Graph before = block(/*pool_after=*/true, /*blocks=*/2);  // 6 convolutions, 2 moves
  const ir::Graph after = run(before, log);
  EXPECT_EQ(count(op_types(after), "kiln.QConvNhwc"), 0u) << after.dump();
  EXPECT_EQ(count(op_types(after), "MaxPool"), 1u) << after.dump();  // the chain's, kept too
  ASSERT_FALSE(log.entries().empty());
  EXPECT_EQ(log.entries().back().message,
            "kept 1 chain(s) of 6 INT8 convolution(s) NCHW: fewer than 4 per transpose they would "
            "need (largest: 'a0', 6 convolution(s), 2 transpose(s))");
}

// A ResNet's stem: a convolution, a max pool, then the blocks; the pool joins the chain, so the
// stem needs no transpose of its own.
TEST(QConvNhwc, AMaxPoolBetweenTheStemAndTheBlocksRunsChannelsLast) {
  KILN_REQUIRE_ONEDNN_QCONV();
  Builder b;
  const ir::ValueId x = b.input("x", {1, 3, 12, 14});
  const ir::ValueId s = b.qconv("stem", x, 3, 16, 3);
  ir::ValueId y = b.g.add_value("p");
  ir::Node pool{.name = "pool", .op_type = "MaxPool", .inputs = {s}, .outputs = {y}};
  pool.opset = 17;
  pool.attrs.set("kernel_shape", std::vector<int64_t>{3, 3});
  pool.attrs.set("strides", std::vector<int64_t>{2, 2});
  pool.attrs.set("pads", std::vector<int64_t>(4, 1));
  b.g.nodes.push_back(std::move(pool));
  for (int i = 0; i < 3; ++i) {
    const std::string n = std::to_string(i);
    const ir::ValueId a = b.qconv("a" + n, y, 16, 8, 1);
    const ir::ValueId m = b.qconv("b" + n, a, 8, 8, 3);
    y = b.qconv("c" + n, m, 8, 16, 1, y);
  }
  passes::PassLog log;
  const ir::Graph before = b.finish({y});
  const ir::Graph after = run(before, log);
  const Ops ops = op_types(after);
  EXPECT_EQ((Ops{ops.begin(), ops.begin() + 3}),
            (Ops{"Transpose", "kiln.QConvNhwc", "kiln.MaxPoolNhwc"}))
      << after.dump();
  EXPECT_EQ(log.entries().back().message,
            "10 INT8 convolutions and 1 max pools run channels-last; 1 transposes in, 1 out");
  testing::expect_same_outputs(before, after, {}, {0, 0});
}

TEST(QConvNhwc, ALoneConvolutionAndAFloatOutputStayNchw) {
  KILN_REQUIRE_ONEDNN_QCONV();
  Builder b;
  const ir::ValueId x = b.input("x", {1, 8, 6, 6});
  const ir::ValueId y = b.qconv("a", x, 8, 8, 3);
  const ir::ValueId f = b.qconv("f", y, 8, 4, 1, ir::kNoValue, /*float_out=*/true);
  passes::PassLog log;
  const ir::Graph before = b.finish({f});
  const ir::Graph after = run(before, log);
  EXPECT_EQ(op_types(after), (Ops{"kiln.QConv", "kiln.QConv"})) << after.dump();
}

TEST(QConvNhwc, NothingChangesWithoutATacticForIt) {
  passes::PassLog log;
  const ir::Graph before = block(true);
  const ir::Graph after =
      testing::run_passes(before, {&passes::qconv_nhwc_pass()}, log,
                          [](const ir::Graph&, const ir::Node&) { return false; });
  EXPECT_EQ(count(op_types(after), "kiln.QConvNhwc"), 0u);
  const ir::Graph no_check = testing::run_passes(before, {&passes::qconv_nhwc_pass()}, log);
  EXPECT_EQ(count(op_types(no_check), "kiln.QConvNhwc"), 0u);
}

}  // namespace qconv_nhwc_test
}  // namespace kiln
