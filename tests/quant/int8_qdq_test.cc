// Explicit quantization: a QDQ model (Q -> DQ on activations, DQ of int8 weights and int32 biases,
// Q -> DQ of float weights as PyTorch's QAT export writes them) builds an INT8 engine with the
// model's own scales, and runs as the reference runs the Q/DQ model.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/builder.h"
#include "engine/engine_test_util.h"
#include "passes/fusion_test_util.h"
#include "passes/pass_harness.h"
#include "testing/onnx_builder.h"

namespace kiln {
namespace {

using testing::OnnxBuilder;

void int_initializer(OnnxBuilder& b, const std::string& name, onnx::TensorProto::DataType type,
                     std::vector<int64_t> dims, std::vector<int32_t> values) {
  auto* t = b.model().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (int64_t d : dims) t->add_dims(d);
  for (int32_t v : values) t->add_int32_data(v);
}

// Q -> DQ of `x` with a per-tensor scale and an int8 or uint8 zero point; returns the DQ output.
std::string qdq(OnnxBuilder& b, const std::string& x, float scale, int zero, bool int8) {
  b.initializer(x + "_s", {}, {scale});
  int_initializer(b, x + "_z", int8 ? onnx::TensorProto::INT8 : onnx::TensorProto::UINT8, {},
                  {zero});
  b.node("QuantizeLinear", {x, x + "_s", x + "_z"}, {x + "_q"}, x + "_quant");
  b.node("DequantizeLinear", {x + "_q", x + "_s", x + "_z"}, {x + "_dq"}, x + "_dequant");
  return x + "_dq";
}

std::vector<int32_t> int8_ramp(int64_t n, int step) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = static_cast<int32_t>((i * step) % 255) - 127;
  return v;
}

// x[1,3,6,6] -Q/DQ(int8)-> Conv(DQ(w1 int8, per channel), DQ(b1 int32)) -> Relu -Q/DQ(uint8)->
// Conv(Q/DQ(w2 float, per tensor)) -> y
OnnxBuilder qdq_model() {
  OnnxBuilder b(13);
  b.input("x", onnx::TensorProto::FLOAT, {1, 3, 6, 6});
  const std::string xq = qdq(b, "x", 0.02f, 0, true);
  int_initializer(b, "w1_q", onnx::TensorProto::INT8, {4, 3, 3, 3}, int8_ramp(108, 37));
  b.initializer("w1_s", {4}, {0.01f, 0.02f, 0.005f, 0.015f});
  int_initializer(b, "w1_z", onnx::TensorProto::INT8, {4}, {0, 0, 0, 0});
  testing::set_attr_int(b.node("DequantizeLinear", {"w1_q", "w1_s", "w1_z"}, {"w1"}, "w1_dq"),
                        "axis", 0);
  int_initializer(b, "b1_q", onnx::TensorProto::INT32, {4}, {100, -200, 300, 0});
  b.initializer("b1_s", {4}, {0.0002f, 0.0004f, 0.0001f, 0.0003f});
  testing::set_attr_int(b.node("DequantizeLinear", {"b1_q", "b1_s"}, {"b1"}, "b1_dq"), "axis", 0);
  testing::set_attr_ints(b.node("Conv", {xq, "w1", "b1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  b.node("Relu", {"c1"}, {"r1"}, "relu1");
  const std::string rq = qdq(b, "r1", 0.01f, 0, false);
  b.initializer("w2", {2, 4, 1, 1}, testing::weights(8));
  const std::string w2q = qdq(b, "w2", 1.0f / 127, 0, true);
  b.node("Conv", {rq, w2q}, {"y"}, "conv2");
  b.output("y");
  return b;
}

TEST(Int8Qdq, BuildsInt8WithTheModelsScales) {
  const OnnxBuilder model = qdq_model();
  engine::BuildOptions o;
  o.optimization_level = 0;  // no --int8: the Q/DQ nodes say what is quantized
  auto engine = testing::build_engine(model, o);
  const engine::Plan& plan = engine->plan();
  std::vector<std::string> ops;
  for (const ir::Node& n : plan.graph.nodes) ops.push_back(n.op_type);
  ASSERT_EQ(ops, (std::vector<std::string>{"QuantizeLinear", "QConv", "QConv"}));
  const ir::Node& conv1 = plan.graph.nodes[1];
  EXPECT_FLOAT_EQ(conv1.attrs.get_float("x_scale", 0), 0.02f);
  EXPECT_EQ(conv1.attrs.get_int("x_zero_point", -1), 128);  // int8 zero point 0
  // The weights come back to the model's int8 values, with its scales.
  const Tensor& w = *plan.graph.value(conv1.inputs[1]).constant();
  const std::vector<int32_t> expect = int8_ramp(108, 37);
  for (size_t i = 0; i < expect.size(); ++i) ASSERT_EQ(w.data<int8_t>()[i], expect[i]) << i;
  EXPECT_FLOAT_EQ(plan.graph.value(conv1.inputs[2]).constant()->data<float>()[1], 0.02f);
  // conv1 (+ relu) writes r1 with the model's uint8 scale for conv2.
  EXPECT_EQ(conv1.attrs.get_int("output_type", 1), 2);
  EXPECT_FLOAT_EQ(conv1.attrs.get_float("y_scale", 0), 0.01f);
  EXPECT_FLOAT_EQ(plan.graph.nodes[2].attrs.get_float("x_scale", 0), 0.01f);
  bool logged = false;
  for (const std::string& line : plan.build_log) {
    logged = logged || line.find(
                           "explicit quantization: 2 Q/DQ pairs on activations and 3 "
                           "quantized constants") != std::string::npos;
  }
  EXPECT_TRUE(logged);

  // The engine computes what the reference computes on the Q/DQ model (which rounds the same
  // values at the same places), up to float summation order at a rounding tie.
  const runtime::NamedTensors in = {{"x", testing::random_f32({1, 3, 6, 6}, 11)}};
  const std::vector<Tensor> ref = testing::reference_outputs(model, in);
  auto ctx = engine->create_execution_context();
  ASSERT_TRUE(ctx.is_ok());
  auto got = (*ctx)->run(in);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  EXPECT_EQ(testing::compare_tensors((*got)[0], ref[0], {0, 0.0105}), "");
}

}  // namespace
}  // namespace kiln
