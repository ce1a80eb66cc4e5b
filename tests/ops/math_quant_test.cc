// QuantizeLinear / DequantizeLinear / DynamicQuantizeLinear: rounding, saturation, per-axis
// parameters, version-dependent features and validation.
#include "ops/math_test_util.h"

namespace kiln::testing::math {
namespace {

ir::Attributes axis_attr(int64_t axis) {
  ir::Attributes a;
  a.set("axis", axis);
  return a;
}

TEST(MathQuantize, SaturatesAndRoundsHalfToEven) {
  expect_output({.op_type = "QuantizeLinear",
                 .opset = 13,
                 .inputs = {in(f32({6}, {0, 2, 3, 1000, -254, -1000})), in(f32({}, {2})),
                            in(tensor<uint8_t>({}, {128}))}},
                tensor<uint8_t>({6}, {128, 129, 130, 255, 1, 0}));
  // 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> 0, -1.5 -> -2; then +1 (after rounding).
  expect_output(
      {.op_type = "QuantizeLinear",
       .opset = 13,
       .inputs = {in(f32({5}, {1, 3, 5, -1, -3})), in(f32({}, {2})), in(tensor<int8_t>({}, {1}))}},
      tensor<int8_t>({5}, {1, 3, 3, 1, -1}));
  // Without a zero point the output is uint8.
  expect_output({.op_type = "QuantizeLinear",
                 .opset = 13,
                 .inputs = {in(f32({2}, {-4, 300})), in(f32({}, {1}))}},
                tensor<uint8_t>({2}, {0, 255}));
}

TEST(MathQuantize, PerAxis) {
  // Channels along axis 1 with scales 1, 2, 4 and zero points 0, 10, 20.
  const Tensor x = f32({1, 3, 2}, {1, 2, 3, 4, 5, 6});
  expect_output({.op_type = "QuantizeLinear",
                 .opset = 13,
                 .attrs = axis_attr(1),
                 .inputs = {in(x), in(f32({3}, {1, 2, 4})), in(tensor<uint8_t>({3}, {0, 10, 20}))}},
                tensor<uint8_t>({1, 3, 2}, {1, 2, 12, 12, 21, 22}));
  expect_output({.op_type = "DequantizeLinear",
                 .opset = 13,
                 .attrs = axis_attr(-1),
                 .inputs = {in(tensor<int8_t>({2, 2}, {1, 2, 3, 4})), in(f32({2}, {1, 0.5f})),
                            in(tensor<int8_t>({2}, {1, 0}))}},
                f32({2, 2}, {0, 1, 2, 2}));
}

TEST(MathDequantize, Basic) {
  expect_output({.op_type = "DequantizeLinear",
                 .opset = 13,
                 .inputs = {in(tensor<uint8_t>({4}, {0, 3, 128, 255})), in(f32({}, {2})),
                            in(tensor<uint8_t>({}, {128}))}},
                f32({4}, {-256, -250, 0, 254}));
  expect_output({.op_type = "DequantizeLinear",
                 .opset = 10,
                 .inputs = {in(tensor<int32_t>({2}, {-1, 2})), in(f32({}, {0.5f}))}},
                f32({2}, {-0.5f, 1}));
}

TEST(MathDequantize, HalfScaleFromOpset19) {
  auto scale = cast_tensor(f32({}, {0.5f}), DType::kF16);
  auto want = cast_tensor(f32({2}, {1, -1}), DType::kF16);
  expect_output({.op_type = "DequantizeLinear",
                 .opset = 19,
                 .inputs = {in(tensor<int8_t>({2}, {2, -2})), in(*scale)}},
                *want);
  expect_error({.op_type = "DequantizeLinear",
                .opset = 13,
                .inputs = {in(tensor<int8_t>({2}, {2, -2})), in(*scale)}},
               StatusCode::kUnsupported, "scale has dtype float16");
}

TEST(MathQuantize, Validation) {
  const Tensor x = f32({2, 3}, std::vector<float>(6));
  expect_error({.op_type = "QuantizeLinear",
                .opset = 13,
                .attrs = axis_attr(1),
                .inputs = {in(x), in(f32({2}, {1, 1}))}},
               StatusCode::kInvalidModel, "one entry per index of axis 1");
  expect_error(
      {.op_type = "QuantizeLinear", .opset = 10, .inputs = {in(x), in(f32({3}, {1, 1, 1}))}},
      StatusCode::kInvalidModel, "must be a scalar before opset 13");
  expect_error({.op_type = "QuantizeLinear",
                .opset = 13,
                .attrs = axis_attr(2),
                .inputs = {in(x), in(f32({3}, {1, 1, 1}))}},
               StatusCode::kInvalidModel, "axis 2 is out of range");
  expect_error({.op_type = "QuantizeLinear",
                .opset = 13,
                .inputs = {in(x), in(f32({3}, {1, 1, 1})), in(tensor<uint8_t>({2}, {0, 0}))}},
               StatusCode::kInvalidModel, "must have the shape of scale");
  expect_error(
      {.op_type = "DequantizeLinear",
       .opset = 13,
       .inputs = {in(tensor<uint8_t>({2}, {1, 2})), in(f32({}, {1})), in(tensor<int8_t>({}, {0}))}},
      StatusCode::kInvalidModel, "zero point has dtype int8 but x has uint8");
  expect_error({.op_type = "QuantizeLinear",
                .opset = 13,
                .inputs = {in(x), in(f32({}, {1})), in(tensor<int32_t>({}, {0}))}},
               StatusCode::kUnsupported, "quantizing to int32");
}

TEST(MathQuantize, Opset21Features) {
  ir::Attributes block;
  block.set("block_size", int64_t{2});
  expect_error({.op_type = "QuantizeLinear",
                .opset = 21,
                .attrs = block,
                .inputs = {in(f32({2}, {1, 2})), in(f32({1}, {1}))}},
               StatusCode::kUnsupported, "block quantization");
  ir::Attributes int8_out;
  int8_out.set("output_dtype", int64_t{3});  // TensorProto INT8
  expect_output({.op_type = "QuantizeLinear",
                 .opset = 21,
                 .attrs = int8_out,
                 .inputs = {in(f32({2}, {-3, 200})), in(f32({}, {1}))}},
                tensor<int8_t>({2}, {-3, 127}));
  expect_error(
      {.op_type = "QuantizeLinear",
       .opset = 21,
       .attrs = int8_out,
       .inputs = {in(f32({2}, {-3, 200})), in(f32({}, {1})), in(tensor<uint8_t>({}, {0}))}},
      StatusCode::kInvalidModel, "output_dtype says int8 but the zero point is uint8");
  expect_output(
      {.op_type = "QuantizeLinear",
       .opset = 21,
       .inputs = {in(f32({2}, {-3, 70000})), in(f32({}, {1})), in(tensor<int16_t>({}, {0}))}},
      tensor<int16_t>({2}, {-3, 32767}));
}

TEST(MathDynamicQuantize, ScaleAndZeroPoint) {
  auto r = run_op({.op_type = "DynamicQuantizeLinear",
                   .opset = 11,
                   .inputs = {in(f32({2}, {-51, 204}))},
                   .num_outputs = 3});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(compare_tensors((*r)[0], tensor<uint8_t>({2}, {0, 255})), "");
  EXPECT_EQ(compare_tensors((*r)[1], f32({}, {1})), "");
  EXPECT_EQ(compare_tensors((*r)[2], tensor<uint8_t>({}, {51})), "");
  auto zeros = run_op({.op_type = "DynamicQuantizeLinear",
                       .opset = 11,
                       .inputs = {in(f32({2}, {0, 0}))},
                       .num_outputs = 3});
  ASSERT_TRUE(zeros.is_ok()) << zeros.status().to_string();
  EXPECT_EQ(compare_tensors((*zeros)[0], tensor<uint8_t>({2}, {0, 0})), "");
  EXPECT_EQ(compare_tensors((*zeros)[2], tensor<uint8_t>({}, {0})), "");
}

}  // namespace
}  // namespace kiln::testing::math
