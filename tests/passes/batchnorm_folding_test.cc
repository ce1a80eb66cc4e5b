#include "passes/batchnorm_folding.h"

#include <gtest/gtest.h>

#include <cmath>

#include "passes/fold_test_util.h"
#include "passes/pass_harness.h"

namespace kiln {
namespace batchnorm_folding_test {

using testing::OnnxBuilder;
using testing::op_types;
using Ops = std::vector<std::string>;
using Names = std::vector<std::string>;

constexpr int kFloat = onnx::TensorProto::FLOAT;

const passes::PassDef& pass() { return passes::batchnorm_folding_pass(); }

// Deterministic, varied values in [-1, 1].
std::vector<float> wave(size_t n, float phase) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(0.7f * static_cast<float>(i) + phase);
  return v;
}

// BatchNormalization `name` over `channels`, reading x and writing y, with distinct parameters.
onnx::NodeProto& add_bn(OnnxBuilder& b, const std::string& x, const std::string& y,
                        const std::string& name, int64_t channels) {
  std::vector<float> scale, bias, mean, var;
  for (int64_t c = 0; c < channels; ++c) {
    const auto f = static_cast<float>(c);
    scale.push_back(0.5f + 0.25f * f);
    bias.push_back(0.1f * f - 0.2f);
    mean.push_back(0.3f - 0.05f * f);
    var.push_back(0.5f + 0.1f * f);
  }
  b.initializer(name + "_scale", {channels}, scale);
  b.initializer(name + "_b", {channels}, bias);
  b.initializer(name + "_mean", {channels}, mean);
  b.initializer(name + "_var", {channels}, var);
  return b.node("BatchNormalization",
                {x, name + "_scale", name + "_b", name + "_mean", name + "_var"}, {y}, name);
}

std::vector<double> values_of(const ir::Graph& g, ir::ValueId v) {
  const Tensor* t = g.value(v).constant();
  std::vector<double> out;
  for (int64_t i = 0; t != nullptr && i < t->numel(); ++i) out.push_back(t->value_as_double(i));
  return out;
}

TEST(BatchnormFolding, FoldsIntoConvWeightsAndBias) {
  // One channel, 1x1 kernel: W = 2, B = 1; BN scale 3, B 1, mean 0.5, var 3, epsilon 1 gives
  // s = 3 / sqrt(3 + 1) = 1.5, so W' = 3 and B' = 1.5 * 1 + (1 - 1.5 * 0.5) = 1.75.
  OnnxBuilder b;
  b.input("x", kFloat, {1, 1, 2, 2});
  b.initializer("w", {1, 1, 1, 1}, {2});
  b.initializer("bias", {1}, {1});
  b.initializer("s", {1}, {3});
  b.initializer("sh", {1}, {1});
  b.initializer("m", {1}, {0.5f});
  b.initializer("v", {1}, {3});
  b.node("Conv", {"x", "w", "bias"}, {"c"}, "conv");
  testing::set_attr_float(b.node("BatchNormalization", {"c", "s", "sh", "m", "v"}, {"y"}, "bn"),
                          "epsilon", 1.0f);
  b.output("y");
  testing::PassResult r = testing::run_pass(b, pass());
  ASSERT_EQ(op_types(r.after), (Ops{"Conv"}));
  const ir::Node& conv = r.after.nodes[0];
  EXPECT_EQ(conv.name, "conv");
  EXPECT_EQ(conv.fused_from, (Names{"conv", "bn"}));
  EXPECT_EQ(r.after.value(conv.outputs[0]).name, "y");
  EXPECT_EQ(values_of(r.after, conv.inputs[1]), (std::vector<double>{3}));
  EXPECT_EQ(values_of(r.after, conv.inputs[2]), (std::vector<double>{1.75}));
  EXPECT_TRUE(testing::logged(r.log, "batchnorm_folding", {"conv + bn", "Conv 'conv'"}));
  testing::expect_same_outputs(r.before, r.after);
}

TEST(BatchnormFolding, FoldsIntoGroupedConvWithoutBias) {
  OnnxBuilder b;
  b.input("x", kFloat, {1, 4, 5, 5});
  b.initializer("w", {6, 2, 3, 3}, wave(6 * 2 * 9, 0.1f));
  auto& conv = b.node("Conv", {"x", "w"}, {"c"}, "conv");
  testing::set_attr_int(conv, "group", 2);
  testing::set_attr_ints(conv, "pads", {1, 1, 1, 1});
  add_bn(b, "c", "y", "bn", 6);
  b.output("y");
  testing::PassResult r = testing::run_pass(b, pass());
  ASSERT_EQ(op_types(r.after), (Ops{"Conv"}));
  ASSERT_EQ(r.after.nodes[0].inputs.size(), 3u);
  EXPECT_EQ(values_of(r.after, r.after.nodes[0].inputs[2]).size(), 6u);
  testing::expect_same_outputs(r.before, r.after);
}

TEST(BatchnormFolding, FoldsIntoGroupedConvTranspose) {
  OnnxBuilder b;
  b.input("x", kFloat, {1, 4, 3, 3});
  b.initializer("w", {4, 3, 2, 2}, wave(4 * 3 * 4, 0.3f));  // [C, M/g, k, k], M = 6
  b.initializer("bias", {6}, wave(6, 1.0f));
  auto& conv = b.node("ConvTranspose", {"x", "w", "bias"}, {"c"}, "deconv");
  testing::set_attr_int(conv, "group", 2);
  testing::set_attr_ints(conv, "strides", {2, 2});
  add_bn(b, "c", "y", "bn", 6);
  b.output("y");
  testing::PassResult r = testing::run_pass(b, pass());
  EXPECT_EQ(op_types(r.after), (Ops{"ConvTranspose"}));
  EXPECT_TRUE(testing::logged(r.log, "batchnorm_folding", {"deconv + bn"}));
  testing::expect_same_outputs(r.before, r.after);
}

struct GemmCase {
  bool trans_b;
  std::vector<int64_t> c_dims;  // empty vector with has_c false: no C
  bool has_c;
  float alpha;
  float beta;
};

class BatchnormFoldingGemm : public ::testing::TestWithParam<GemmCase> {};

TEST_P(BatchnormFoldingGemm, FoldsIntoBAndC) {
  const GemmCase& p = GetParam();
  OnnxBuilder b;
  b.input("a", kFloat, {3, 4});
  b.initializer("w", p.trans_b ? std::vector<int64_t>{5, 4} : std::vector<int64_t>{4, 5},
                wave(20, 0.2f));
  std::vector<std::string> inputs = {"a", "w"};
  if (p.has_c) {
    int64_t n = 1;
    for (int64_t d : p.c_dims) n *= d;
    b.initializer("c", p.c_dims, wave(static_cast<size_t>(n), 2.0f));
    inputs.push_back("c");
  }
  auto& gemm = b.node("Gemm", inputs, {"g"}, "gemm");
  testing::set_attr_int(gemm, "transB", p.trans_b ? 1 : 0);
  testing::set_attr_float(gemm, "alpha", p.alpha);
  testing::set_attr_float(gemm, "beta", p.beta);
  add_bn(b, "g", "y", "bn", 5);
  b.output("y");
  testing::PassResult r = testing::run_pass(b, pass());
  ASSERT_EQ(op_types(r.after), (Ops{"Gemm"}));
  EXPECT_EQ(r.after.nodes[0].attrs.get_float("beta", 0), 1.0f);
  EXPECT_EQ(r.after.nodes[0].attrs.get_float("alpha", 0), p.alpha);
  testing::expect_same_outputs(r.before, r.after);
}

INSTANTIATE_TEST_SUITE_P(Layouts, BatchnormFoldingGemm,
                         ::testing::Values(GemmCase{true, {5}, true, 1.0f, 1.0f},
                                           GemmCase{false, {}, true, 2.0f, 0.5f},
                                           GemmCase{false, {1, 5}, true, 1.0f, -1.0f},
                                           GemmCase{true, {3, 5}, true, 0.5f, 2.0f},
                                           GemmCase{false, {3, 1}, true, 1.0f, 1.0f},
                                           GemmCase{true, {}, false, 1.5f, 1.0f}));

TEST(BatchnormFolding, FoldsIntoMatMulPlusAdd) {
  OnnxBuilder b;
  b.input("x", kFloat, {3, 4});
  b.initializer("w", {4, 5}, wave(20, 0.4f));
  b.node("MatMul", {"x", "w"}, {"m"}, "matmul");
  add_bn(b, "m", "y", "bn", 5);
  b.output("y");
  testing::PassResult r = testing::run_pass(b, pass());
  ASSERT_EQ(op_types(r.after), (Ops{"MatMul", "Add"}));
  EXPECT_EQ(r.after.nodes[0].name, "matmul");
  EXPECT_EQ(r.after.nodes[1].name, "bn");
  EXPECT_EQ(r.after.value(r.after.nodes[1].outputs[0]).name, "y");
  EXPECT_TRUE(testing::logged(r.log, "batchnorm_folding", {"matmul + bn", "Add 'bn'"}));
  testing::expect_same_outputs(r.before, r.after);
}

TEST(BatchnormFolding, FoldsAChainOfBatchNormalizations) {
  OnnxBuilder b;
  b.input("x", kFloat, {1, 2, 3, 3});
  b.initializer("w", {3, 2, 1, 1}, wave(6, 0.5f));
  b.node("Conv", {"x", "w"}, {"c"}, "conv");
  add_bn(b, "c", "t", "bn1", 3);
  add_bn(b, "t", "y", "bn2", 3);
  b.output("y");
  testing::PassResult r = testing::run_pass(b, pass());
  ASSERT_EQ(op_types(r.after), (Ops{"Conv"}));
  EXPECT_EQ(r.after.nodes[0].fused_from, (Names{"conv", "bn1", "bn2"}));
  testing::expect_same_outputs(r.before, r.after);
}

TEST(BatchnormFolding, FoldsFloat64) {
  OnnxBuilder b;
  b.input("x", onnx::TensorProto::DOUBLE, {1, 2, 3, 3});
  testing::double_initializer(b, "w", {2, 2, 1, 1}, {0.5, -1.5, 2.0, 0.25});
  for (const char* p : {"s", "sh", "m"}) testing::double_initializer(b, p, {2}, {0.75, -0.5});
  testing::double_initializer(b, "v", {2}, {0.2, 1.3});
  b.node("Conv", {"x", "w"}, {"c"}, "conv");
  b.node("BatchNormalization", {"c", "s", "sh", "m", "v"}, {"y"}, "bn");
  b.output("y");
  testing::PassResult r = testing::run_pass(b, pass());
  ASSERT_EQ(op_types(r.after), (Ops{"Conv"}));
  EXPECT_EQ(r.after.value(r.after.nodes[0].inputs[1]).desc.dtype, DType::kF64);
  testing::expect_same_outputs(r.before, r.after, {}, {1e-12, 1e-12});
}

TEST(BatchnormFolding, FoldsFloat16) {
  const auto half_initializer = [](OnnxBuilder& b, const std::string& name, Dims dims,
                                   const std::vector<float>& values) {
    onnx::TensorProto& t = testing::typed_initializer(b, name, onnx::TensorProto::FLOAT16, dims);
    for (float v : values) t.add_int32_data(Half(v).bits);
  };
  OnnxBuilder b;
  b.input("x", onnx::TensorProto::FLOAT16, {1, 2, 3, 3});
  half_initializer(b, "w", {2, 2, 1, 1}, {0.5f, -1.5f, 2.0f, 0.25f});
  for (const char* p : {"s", "sh", "m"}) half_initializer(b, p, {2}, {0.75f, -0.5f});
  half_initializer(b, "v", {2}, {0.25f, 1.5f});
  b.node("Conv", {"x", "w"}, {"c"}, "conv");
  b.node("BatchNormalization", {"c", "s", "sh", "m", "v"}, {"y"}, "bn");
  b.output("y");
  testing::PassResult r = testing::run_pass(b, pass());
  ASSERT_EQ(op_types(r.after), (Ops{"Conv"}));
  EXPECT_EQ(r.after.value(r.after.nodes[0].inputs[1]).desc.dtype, DType::kF16);
  // The unfolded graph rounds to float16 after the Conv and again after the BatchNormalization.
  testing::expect_same_outputs(r.before, r.after, {}, {1e-2, 1e-2});
}

// --- guards

OnnxBuilder conv_bn() {
  OnnxBuilder b;
  b.input("x", kFloat, {1, 2, 3, 3});
  b.initializer("w", {3, 2, 1, 1}, wave(6, 0.5f));
  b.node("Conv", {"x", "w"}, {"c"}, "conv");
  add_bn(b, "c", "y", "bn", 3);
  b.output("y");
  return b;
}

void expect_unchanged(const testing::PassResult& r) {
  EXPECT_EQ(r.after.dump(), r.before.dump());
  EXPECT_EQ(r.log.count("batchnorm_folding"), 0u);
}

TEST(BatchnormFolding, NeedsConstantBatchNormParameters) {
  OnnxBuilder b = conv_bn();
  b.input("bn_mean", kFloat, {3});  // now an input with a default: the user may override it
  expect_unchanged(testing::run_pass(b, pass()));
}

TEST(BatchnormFolding, NeedsConstantWeightsAndBias) {
  for (const bool bias_is_input : {false, true}) {
    OnnxBuilder b;
    b.input("x", kFloat, {1, 2, 3, 3});
    if (bias_is_input) {
      b.initializer("w", {3, 2, 1, 1}, wave(6, 0.5f));
      b.input("bias", kFloat, {3});
    } else {
      b.input("w", kFloat, {3, 2, 1, 1});
      b.initializer("bias", {3}, {1, 2, 3});
    }
    b.node("Conv", {"x", "w", "bias"}, {"c"}, "conv");
    add_bn(b, "c", "y", "bn", 3);
    b.output("y");
    expect_unchanged(testing::run_pass(b, pass()));
  }
}

// Before opset 7, Gemm broadcasts C only with broadcast=1: here C must be exactly [M, N] = [1, 5],
// and a folded C of shape [N] would not be.
TEST(BatchnormFolding, SkipsGemmBeforeOpset7) {
  OnnxBuilder b(/*opset=*/6);
  b.input("a", kFloat, {1, 4});
  b.initializer("w", {4, 5}, wave(20, 0.2f));
  b.initializer("c", {1, 5}, wave(5, 1.0f));
  b.node("Gemm", {"a", "w", "c"}, {"g"}, "gemm");
  add_bn(b, "g", "y", "bn", 5);
  b.output("y");
  expect_unchanged(testing::run_pass(b, pass()));
}

TEST(BatchnormFolding, NeedsTheProducerOutputReadOnlyByTheBatchNorm) {
  OnnxBuilder other_reader = conv_bn();
  other_reader.node("Relu", {"c"}, {"r"}, "relu");
  other_reader.output("r");
  expect_unchanged(testing::run_pass(other_reader, pass()));
  OnnxBuilder graph_output = conv_bn();
  graph_output.output("c");
  expect_unchanged(testing::run_pass(graph_output, pass()));
}

// Training-mode BatchNormalization (running statistics as outputs) is rejected at import; the pass
// must not depend on that.
TEST(BatchnormFolding, SkipsTrainingModeBatchNorm) {
  ir::Graph g = testing::import_model(conv_bn());
  ir::Node& bn = g.nodes[1];
  bn.outputs.push_back(g.add_value("running_mean", ir::TensorDesc::of_dims(DType::kF32, {3})));
  const std::string before = g.dump();
  passes::PassLog log = testing::run_on(g, pass());
  EXPECT_EQ(g.dump(), before);
  EXPECT_EQ(log.count("batchnorm_folding"), 0u);
}

// spatial = 0 (opsets 6-8): one parameter per element of [C, H, W], not per channel.
TEST(BatchnormFolding, SkipsPerElementBatchNorm) {
  OnnxBuilder b(/*opset=*/7);
  b.input("x", kFloat, {1, 2, 3, 3});
  b.initializer("w", {2, 2, 1, 1}, wave(4, 0.5f));
  b.node("Conv", {"x", "w"}, {"c"}, "conv");
  for (const char* p : {"s", "sh", "m"}) b.initializer(p, {2, 3, 3}, wave(18, 3.0f));
  b.initializer("v", {2, 3, 3}, std::vector<float>(18, 1.0f));
  auto& bn = b.node("BatchNormalization", {"c", "s", "sh", "m", "v"}, {"y"}, "bn");
  testing::set_attr_int(bn, "spatial", 0);
  b.output("y");
  expect_unchanged(testing::run_pass(b, pass()));
}

// Only float32/float16/float64 weights are folded (a bfloat16 or integer weight is left alone).
TEST(BatchnormFolding, SkipsNonFloatWeights) {
  ir::Graph g = testing::import_model(conv_bn());
  ir::Value& w = g.value(g.find_value("w"));
  w.initializer = Tensor::from_vector<int32_t>({3, 2, 1, 1}, {1, 2, 3, 4, 5, 6});
  w.desc = ir::TensorDesc::of_dims(DType::kI32, {3, 2, 1, 1});
  const std::string before = g.dump();
  passes::PassLog log = testing::run_on(g, pass());
  EXPECT_EQ(g.dump(), before);
  EXPECT_EQ(log.count("batchnorm_folding"), 0u);
}

// A 3-D MatMul output [B, M, N] has channel axis 1 = M, which B's columns do not index.
TEST(BatchnormFolding, SkipsMatMulWhoseChannelIsNotItsColumns) {
  OnnxBuilder b;
  b.input("x", kFloat, {2, 3, 4});
  b.initializer("w", {4, 5}, wave(20, 0.4f));
  b.node("MatMul", {"x", "w"}, {"m"}, "matmul");
  add_bn(b, "m", "y", "bn", 3);
  b.output("y");
  expect_unchanged(testing::run_pass(b, pass()));
}

}  // namespace batchnorm_folding_test
}  // namespace kiln

namespace kiln {
namespace batchnorm_folding_test {

// PyTorch's QAT export of Conv + BN: Conv -> Div(per-channel BN scale) -> BatchNormalization. The
// Div folds into the weights (a scale without shift), then the BN does.
TEST(BatchnormFolding, FoldsPerChannelDivAndMulAfterConv) {
  for (const std::string op : {"Div", "Mul"}) {
    for (const bool constant_first : {false, true}) {
      if (op == "Div" && constant_first) continue;  // c / x is not affine
      OnnxBuilder b;
      b.input("x", kFloat, {1, 2, 3, 3});
      b.initializer("w", {3, 2, 1, 1}, wave(6, 0.5f));
      b.initializer("f", {1, 3, 1, 1}, {0.5f, 2.0f, -4.0f});
      b.node("Conv", {"x", "w"}, {"c"}, "conv");
      b.node(op, constant_first ? Names{"f", "c"} : Names{"c", "f"}, {"d"}, "scale");
      add_bn(b, "d", "y", "bn", 3);
      b.output("y");
      const auto r = testing::run_pass(b, pass());
      EXPECT_EQ(op_types(r.after), Ops{"Conv"}) << op << constant_first;
      testing::expect_same_outputs(r.before, r.after);
    }
  }
}

TEST(BatchnormFolding, LeavesDivAlongOtherAxesAndDivByX) {
  for (const bool spatial : {true, false}) {
    OnnxBuilder b;
    b.input("x", kFloat, {1, 2, 3, 3});
    b.initializer("w", {3, 2, 1, 1}, wave(6, 0.5f));
    b.node("Conv", {"x", "w"}, {"c"}, "conv");
    if (spatial) {
      b.initializer("f", {3, 1}, {1, 2, 3});  // varies along H
      b.node("Div", {"c", "f"}, {"y"}, "scale");
    } else {
      b.initializer("f", {1}, {2});
      b.node("Div", {"f", "c"}, {"y"}, "scale");
    }
    b.output("y");
    expect_unchanged(testing::run_pass(b, pass()));
  }
}

}  // namespace batchnorm_folding_test
}  // namespace kiln
