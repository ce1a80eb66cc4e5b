// quant/scale_quantize_fusion: a squeeze-and-excitation's Mul (X by a per-(image, channel) scale)
// and the uint8 QuantizeLinear of its product become one kiln.ScaleQuantize with the very same
// bytes out, whichever operand comes first and whether the scale is per image or broadcast over
// the batch; Muls that do not scale per channel, products read elsewhere and other quantizations
// stay as they are.
#include "quant/scale_quantize_fusion.h"

#include <gtest/gtest.h>

#include <cstring>

#include "engine/engine_test_util.h"
#include "ops/infer_graph.h"
#include "passes/fold_test_util.h"
#include "passes/pass_harness.h"
#include "runtime/reference_executor.h"
#include "testing/onnx_builder.h"

namespace kiln {
namespace {

using testing::OnnxBuilder;

struct SeCase {
  bool scale_first = true;  // Mul(S, X) rather than Mul(X, S)
  bool batch_scale = true;  // S per image [N, C, 1, 1], else a constant [1, C, 1, 1]
  bool product_is_output = false;
  onnx::TensorProto::DataType q_type = onnx::TensorProto::UINT8;
};

// x [2, 5, 6, 7] -> (GlobalAveragePool -> Sigmoid: s, or a constant s) -> Mul -> QuantizeLinear.
OnnxBuilder se_model(const SeCase& c) {
  OnnxBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {2, 5, 6, 7}).output("y");
  b.initializer("qs", {}, {0.02f});
  testing::typed_initializer(b, "zp", c.q_type, {})
      .add_int32_data(c.q_type == onnx::TensorProto::UINT8 ? 131 : -3);
  if (c.batch_scale) {
    b.node("GlobalAveragePool", {"x"}, {"g"}, "gap");
    b.node("Sigmoid", {"g"}, {"s"}, "sig");
  } else {
    b.initializer("s", {1, 5, 1, 1}, {0.3f, -1.7f, 2.5f, 0.01f, 1.0f});
  }
  b.node("Mul",
         c.scale_first ? std::vector<std::string>{"s", "x"} : std::vector<std::string>{"x", "s"},
         {"p"}, "scale");
  b.node("QuantizeLinear", {"p", "qs", "zp"}, {"y"}, "q");
  if (c.product_is_output) b.output("p");
  return b;
}

std::vector<std::string> ops_of(const ir::Graph& g) {
  std::vector<std::string> ops;
  for (const ir::Node& n : g.nodes) ops.push_back(n.op_type);
  return ops;
}

TEST(ScaleQuantizeFusion, FusesEitherOrderAndBothScalesExactly) {
  for (bool scale_first : {true, false}) {
    for (bool batch_scale : {true, false}) {
      SCOPED_TRACE(::testing::Message()
                   << "scale first " << scale_first << ", per image " << batch_scale);
      const OnnxBuilder b = se_model({.scale_first = scale_first, .batch_scale = batch_scale});
      const runtime::NamedTensors in = {{"x", testing::random_f32({2, 5, 6, 7}, 11)}};
      const std::vector<Tensor> want = testing::reference_outputs(b, in);
      ir::Graph g = testing::import_model(b);
      std::vector<std::string> log;
      ASSERT_EQ(quant::fuse_scale_quantize(g, log), 1);
      ASSERT_TRUE(g.verify().is_ok()) << g.verify().to_string();
      ASSERT_TRUE(ops::infer_graph_shapes(g).is_ok());
      EXPECT_EQ(ops_of(g).back(), "ScaleQuantize");
      EXPECT_EQ(g.nodes.back().fused_from, (std::vector<std::string>{"scale", "q"}));
      auto exec = runtime::ReferenceExecutor::create(g);
      ASSERT_TRUE(exec.is_ok()) << exec.status().to_string();
      auto got = exec->run(in);
      ASSERT_TRUE(got.is_ok()) << got.status().to_string();
      ASSERT_EQ((*got)[0].dtype(), DType::kU8);
      EXPECT_EQ(std::memcmp((*got)[0].raw_data(), want[0].raw_data(), want[0].nbytes()), 0);
    }
  }
}

TEST(ScaleQuantizeFusion, LeavesOtherProductsAndQuantizationsAlone) {
  std::vector<std::string> log;
  {  // the product is read as a graph output too
    ir::Graph g = testing::import_model(se_model({.product_is_output = true}));
    EXPECT_EQ(quant::fuse_scale_quantize(g, log), 0);
  }
  {  // int8, not uint8
    ir::Graph g = testing::import_model(se_model({.q_type = onnx::TensorProto::INT8}));
    EXPECT_EQ(quant::fuse_scale_quantize(g, log), 0);
  }
  {  // X * X: not a scale per channel; and a scale per (channel, row)
    OnnxBuilder b;
    b.input("x", onnx::TensorProto::FLOAT, {1, 4, 3, 3}).output("y").output("y2");
    b.initializer("qs", {}, {0.1f});
    b.initializer("r", {1, 4, 3, 1}, std::vector<float>(12, 0.5f));
    testing::uint8_initializer(b, "zp", {}, {128});
    b.node("Mul", {"x", "x"}, {"p"}, "square");
    b.node("QuantizeLinear", {"p", "qs", "zp"}, {"y"}, "q");
    b.node("Mul", {"x", "r"}, {"p2"}, "rows");
    b.node("QuantizeLinear", {"p2", "qs", "zp"}, {"y2"}, "q2");
    ir::Graph g = testing::import_model(b);
    EXPECT_EQ(quant::fuse_scale_quantize(g, log), 0);
  }
  EXPECT_TRUE(log.empty());
}

}  // namespace
}  // namespace kiln
