// kiln.FusedConv and kiln.FusedGemm: hand-computed values, shape inference, validation.
#include "ops/kiln_fused.h"

#include <cmath>

#include "nn_test_util.h"

namespace kiln::nn_test {
namespace {

using testing::f32;

std::vector<float> iota(int n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  return v;
}

OpCase kiln_op(std::string op, std::vector<OpInput> inputs, ir::Attributes a = {}) {
  return OpCase{.op_type = std::move(op),
                .opset = 1,
                .attrs = std::move(a),
                .inputs = std::move(inputs),
                .domain = "kiln"};
}

// X = 0..8 as 3x3 and a 2x2 kernel of ones: conv(X, W) = [8, 12, 20, 24].
OpCase fused_conv(std::vector<OpInput> extra, ir::Attributes a = {}) {
  std::vector<OpInput> inputs = {in(f32({1, 1, 3, 3}, iota(9))),
                                 in(f32({1, 1, 2, 2}, {1, 1, 1, 1}))};
  inputs.insert(inputs.end(), extra.begin(), extra.end());
  return kiln_op("FusedConv", std::move(inputs), std::move(a));
}

TEST(KilnFusedConv, BiasResidualAndRelu) {
  // [8, 12, 20, 24] - 10 + [1, -5, 0, 1] = [-1, -3, 10, 15] -> Relu.
  auto out = run_ok(fused_conv({in(f32({1}, {-10})), in(f32({1, 1, 2, 2}, {1, -5, 0, 1}))},
                               attrs({{"activation", std::string("Relu")}})));
  expect_f32(out, 0, {1, 1, 2, 2}, {0, 0, 10, 15});
}

TEST(KilnFusedConv, ResidualWithoutBiasThenClip) {
  // [8, 12, 20, 24] + [-10, -10, -10, -30] = [-2, 2, 10, -6] -> Clip(0, 6).
  auto out = run_ok(fused_conv(
      {absent(), in(f32({1, 1, 2, 2}, {-10, -10, -10, -30}))},
      attrs({{"activation", std::string("Clip")}, {"activation_params", Floats{0, 6}}})));
  expect_f32(out, 0, {1, 1, 2, 2}, {0, 2, 6, 0});
}

TEST(KilnFusedConv, NoActivationIsConvPlusResidual) {
  auto out = run_ok(fused_conv({in(f32({1}, {1})), in(f32({1, 1, 2, 2}, {0, 1, 2, 3}))}));
  expect_f32(out, 0, {1, 1, 2, 2}, {9, 14, 23, 28});
  // An empty activation name is the same as none.
  out = run_ok(fused_conv({in(f32({1}, {1}))}, attrs({{"activation", std::string("")}})));
  expect_f32(out, 0, {1, 1, 2, 2}, {9, 13, 21, 25});
}

TEST(KilnFusedConv, ConvAttributesApply) {
  // Pads 1 and stride 2 give [0, 3, 9, 24]; LeakyRelu(0.5) after a bias of -6: [-3, -1.5, 3, 18].
  auto out =
      run_ok(fused_conv({in(f32({1}, {-6}))}, attrs({{"pads", Ints{1, 1, 1, 1}},
                                                     {"strides", Ints{2, 2}},
                                                     {"activation", std::string("LeakyRelu")},
                                                     {"activation_params", Floats{0.5f}}})));
  expect_f32(out, 0, {1, 1, 2, 2}, {-3, -1.5f, 3, 18});
}

TEST(KilnFusedConv, Float16) {
  OpCase c = fused_conv({}, attrs({{"activation", std::string("HardSigmoid")},
                                   {"activation_params", Floats{0.05f, -0.5f}}}));
  for (OpInput& i : c.inputs) i.tensor = cast_tensor(*i.tensor, DType::kF16).value();
  auto out = run_ok(c);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dtype(), DType::kF16);
  // 0.05 * [8, 12, 20, 24] - 0.5 = [-0.1, 0.1, 0.5, 0.7].
  const Tensor got = cast_tensor(out[0], DType::kF32).value();
  EXPECT_EQ(testing::compare_tensors(got, f32({1, 1, 2, 2}, {0, 0.1f, 0.5f, 0.7f}), {1e-3, 1e-3}),
            "");
}

TEST(KilnFusedConv, ShapeInferenceKeepsSymbolsAndTakesZsDims) {
  ir::Node node;
  node.name = "node0";
  node.op_type = "FusedConv";
  node.domain = "kiln";
  node.opset = 1;
  node.inputs = {0, 1, ir::kNoValue, 3};
  node.outputs = {100};
  const ir::TensorDesc x = sym(DType::kF32, {"batch", 3, 8, 8});
  const ir::TensorDesc w = sym(DType::kF32, {4, 3, 3, 3});
  const ir::TensorDesc z = sym(DType::kF32, {"batch", 4, 6, 6});
  const ir::TensorDesc none;
  const ops::ResolvedOp op = ops::resolve_op(node);
  ASSERT_NE(op.def, nullptr);
  auto inf = ops::infer_node(node, op, {&x, &w, &none, &z}, {nullptr, nullptr, nullptr, nullptr});
  ASSERT_TRUE(inf.is_ok()) << inf.status().to_string();
  EXPECT_EQ(inf->outputs[0].to_string(), "float32[batch,4,6,6]");
}

TEST(KilnFusedConv, Errors) {
  expect_error(fused_conv({}, attrs({{"activation", std::string("Swish")}})),
               StatusCode::kInvalidModel, "unknown activation 'Swish'");
  expect_error(fused_conv({}, attrs({{"activation", std::string("Clip")},
                                     {"activation_params", Floats{0}}})),
               StatusCode::kInvalidModel, "activation 'Clip' takes 2 value(s)");
  expect_error(fused_conv({}, attrs({{"activation_params", Floats{1}}})), StatusCode::kInvalidModel,
               "activation 'none' takes 0 value(s)");
  expect_error(fused_conv({absent(), in(f32({1, 1, 2, 1}, {1, 2}))}), StatusCode::kInvalidModel,
               "residual Z float32[1,1,2,1] must have exactly the output's shape");
  // A residual of [1, 1, 1, 1] would broadcast under Add, but Z is never broadcast.
  expect_error(fused_conv({absent(), in(f32({1, 1, 1, 1}, {1}))}), StatusCode::kInvalidModel,
               "residual Z");
  OpCase f16_z = fused_conv({absent(), in(f32({1, 1, 2, 2}, {1, 2, 3, 4}))});
  f16_z.inputs[3].tensor = cast_tensor(*f16_z.inputs[3].tensor, DType::kF16).value();
  expect_error(f16_z, StatusCode::kInvalidModel, "input 3 has dtype float16");
  OpCase f64 = fused_conv({});
  for (OpInput& i : f64.inputs) i.tensor = cast_tensor(*i.tensor, DType::kF64).value();
  expect_error(f64, StatusCode::kUnsupported, "float64");
  // Conv's own validation is shared.
  expect_error(kiln_op("FusedConv", {in(f32({1, 2, 3, 3}, iota(18))), in(f32({1, 1, 1, 1}, {1}))}),
               StatusCode::kInvalidModel, "channels");
}

// A = [[1, 2, 3], [4, 5, 6]], B = [[1, 0], [0, 1], [1, 1]]: A @ B = [[4, 5], [10, 11]].
const Tensor kA = f32({2, 3}, {1, 2, 3, 4, 5, 6});
const Tensor kB = f32({3, 2}, {1, 0, 0, 1, 1, 1});

TEST(KilnFusedGemm, AlphaBetaAndActivation) {
  // 0.5 * [[4, 5], [10, 11]] + 2 * [-3, -6] = [[-4, -9.5], [-1, -6.5]], then LeakyRelu(0.1).
  auto out = run_ok(kiln_op("FusedGemm", {in(kA), in(kB), in(f32({2}, {-3, -6}))},
                            attrs({{"alpha", 0.5f},
                                   {"beta", 2.0f},
                                   {"activation", std::string("LeakyRelu")},
                                   {"activation_params", Floats{0.1f}}})));
  expect_f32(out, 0, {2, 2}, {-0.4f, -0.95f, -0.1f, -0.65f});
}

TEST(KilnFusedGemm, TransposedOperandsAndScalarC) {
  const Tensor at = f32({3, 2}, {1, 4, 2, 5, 3, 6});
  const Tensor bt = f32({2, 3}, {1, 0, 1, 0, 1, 1});
  auto out = run_ok(kiln_op("FusedGemm", {in(at), in(bt), in(f32({}, {1}))},
                            attrs({{"transA", int64_t{1}}, {"transB", int64_t{1}}})));
  expect_f32(out, 0, {2, 2}, {5, 6, 11, 12});
}

TEST(KilnFusedGemm, TwoDimensionalAUsesGemmsBroadcasting) {
  // C [2, 1] adds one value per row, as Gemm allows for a 2-D A.
  auto out = run_ok(kiln_op("FusedGemm", {in(kA), in(kB), in(f32({2, 1}, {1, 2}))}));
  expect_f32(out, 0, {2, 2}, {5, 6, 12, 13});
}

TEST(KilnFusedGemm, BatchedA) {
  // Batch 1 is [[0, 0, 1], [1, 0, 0]]: @ B = [[1, 1], [1, 0]]. C [1, 2] = [1, -1], then Relu.
  const Tensor a = f32({2, 2, 3}, {1, 2, 3, 4, 5, 6, 0, 0, 1, 1, 0, 0});
  auto out = run_ok(kiln_op("FusedGemm", {in(a), in(kB), in(f32({1, 2}, {1, -1}))},
                            attrs({{"activation", std::string("Relu")}})));
  expect_f32(out, 0, {2, 2, 2}, {5, 4, 11, 10, 2, 0, 2, 0});
  // Without C, rank 4.
  out = run_ok(kiln_op("FusedGemm", {in(a.reshaped({1, 2, 2, 3})), in(kB)}));
  expect_f32(out, 0, {1, 2, 2, 2}, {4, 5, 10, 11, 1, 1, 1, 0});
}

TEST(KilnFusedGemm, ResidualBeforeTheActivation) {
  // A @ B = [[4, 5], [10, 11]]; + C [1, -20] + Z [[-10, 0], [0, 0]] = [[-5, -15], [11, -9]]; Relu.
  auto out = run_ok(kiln_op(
      "FusedGemm", {in(kA), in(kB), in(f32({2}, {1, -20})), in(f32({2, 2}, {-10, 0, 0, 0}))},
      attrs({{"activation", std::string("Relu")}})));
  expect_f32(out, 0, {2, 2}, {0, 0, 11, 0});
  // Batched A without C: Z is [2, 2, 2], exactly Y's shape.
  const Tensor a = f32({2, 2, 3}, {1, 2, 3, 4, 5, 6, 0, 0, 1, 1, 0, 0});
  out = run_ok(kiln_op("FusedGemm", {in(a), in(kB), absent(), in(f32({2, 2, 2}, iota(8)))}));
  expect_f32(out, 0, {2, 2, 2}, {4, 6, 12, 14, 5, 6, 7, 7});
}

TEST(KilnFusedGemm, Float16WithGelu) {
  OpCase c = kiln_op("FusedGemm", {in(kA), in(f32({3, 1}, {1, -1, 0})), in(f32({1}, {0}))},
                     attrs({{"activation", std::string("Gelu")}}));
  for (OpInput& i : c.inputs) i.tensor = cast_tensor(*i.tensor, DType::kF16).value();
  auto out = run_ok(c);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dtype(), DType::kF16);
  // A @ [1, -1, 0] = [-1, -1]; GELU(-1) = -0.158655.
  const Tensor got = cast_tensor(out[0], DType::kF32).value();
  EXPECT_EQ(testing::compare_tensors(got, f32({2, 1}, {-0.158655f, -0.158655f}), {1e-3, 1e-3}), "");
}

TEST(KilnFusedGemm, Errors) {
  const Tensor a3 = f32({2, 2, 3}, iota(12));
  expect_error(kiln_op("FusedGemm", {in(a3), in(kB)}, attrs({{"transA", int64_t{1}}})),
               StatusCode::kInvalidModel, "transA = 1 needs a 2-D A");
  // A batched A broadcasts C to [1, N]: a per-row C is not allowed.
  expect_error(kiln_op("FusedGemm", {in(a3), in(kB), in(f32({2, 2}, {1, 2, 3, 4}))}),
               StatusCode::kInvalidModel, "C float32[2,2] cannot be broadcast to [1,2]");
  expect_error(kiln_op("FusedGemm", {in(kA), in(kB), in(f32({3}, {1, 2, 3}))}),
               StatusCode::kInvalidModel, "cannot be broadcast");
  expect_error(kiln_op("FusedGemm", {in(kA), in(kB.reshaped({1, 3, 2}))}),
               StatusCode::kInvalidModel, "B float32[1,3,2] must be 2-D");
  expect_error(kiln_op("FusedGemm", {in(f32({3}, {1, 2, 3})), in(kB)}), StatusCode::kInvalidModel,
               "must have rank >= 2");
  expect_error(kiln_op("FusedGemm", {in(kA), in(f32({2, 2}, {1, 2, 3, 4}))}),
               StatusCode::kInvalidModel, "inner dimensions do not match");
  expect_error(kiln_op("FusedGemm", {in(kA), in(kB)}, attrs({{"activation", std::string("Elu")}})),
               StatusCode::kInvalidModel, "unknown activation 'Elu'");
  // Z is never broadcast, and has A's dtype.
  expect_error(kiln_op("FusedGemm", {in(kA), in(kB), absent(), in(f32({1, 2}, {1, 2}))}),
               StatusCode::kInvalidModel,
               "residual Z float32[1,2] must have exactly the output's shape float32[2,2]");
  expect_error(
      kiln_op("FusedGemm", {in(kA), in(kB), absent(), in(testing::i64({2, 2}, {1, 2, 3, 4}))}),
      StatusCode::kInvalidModel, "residual Z int64[2,2] must have A's dtype float32");
  expect_error(kiln_op("FusedGemm", {in(testing::i64({2, 2}, {1, 2, 3, 4})),
                                     in(testing::i64({2, 2}, {1, 2, 3, 4}))}),
               StatusCode::kUnsupported, "int64");
}

}  // namespace
}  // namespace kiln::nn_test
