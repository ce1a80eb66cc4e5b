// Shape arithmetic traced through the graph (ops/dims_values.h): the descs the importer's shape
// inference gives the values of PyTorch's dynamic-batch view chains.
#include "ops/dims_values.h"

#include <gtest/gtest.h>

#include "frontend/onnx/importer.h"
#include "testing/onnx_builder.h"

namespace kiln {
namespace dims_values_test {

using testing::OnnxBuilder;
constexpr int kFloat = onnx::TensorProto::FLOAT;

// x [batch, 6, 2, 2] and n = Unsqueeze(Gather(Shape(x), 0)) = [batch], the start of every chain.
OnnxBuilder batch_model() {
  OnnxBuilder b;
  b.input("x", kFloat, {-1, 6, 2, 2}, {"batch", "", "", ""});
  b.initializer_i64("zero", {}, {0});
  b.initializer_i64("axes", {1}, {0});
  b.node("Shape", {"x"}, {"s"}, "shape");
  b.node("Gather", {"s", "zero"}, {"g"}, "gather");
  b.node("Unsqueeze", {"g", "axes"}, {"n"}, "unsqueeze");
  return b;
}

onnx::NodeProto& concat(OnnxBuilder& b, std::vector<std::string> in, const std::string& out) {
  onnx::NodeProto& node = b.node("Concat", std::move(in), {out}, out);
  testing::set_attr_int(node, "axis", 0);
  return node;
}

Result<ir::Graph> import(const OnnxBuilder& b) {
  return frontend::import_onnx_bytes(b.bytes(), ".");
}

std::string desc_of(const ir::Graph& g, const std::string& name) {
  const ir::ValueId v = g.find_value(name);
  return v == ir::kNoValue ? "(no value)" : g.value(v).desc.to_string();
}

TEST(DimsValues, AViewChainKeepsTheBatchSymbol) {
  OnnxBuilder b = batch_model();
  b.initializer_i64("rest", {2}, {6, -1});
  concat(b, {"n", "rest"}, "target");
  b.node("Reshape", {"x", "target"}, {"y"}, "reshape");
  b.output("y");
  Result<ir::Graph> g = import(b);
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  EXPECT_EQ(desc_of(*g, "y"), "float32[batch,6,4]");
}

// PyTorch's cls.expand(x.shape[0], -1, -1): Where(Equal(shape, -1), 1, shape) is [batch, 1, 1]
// because a dim is never -1.
TEST(DimsValues, ExpandOfMinusOnesFollowsTheBatch) {
  OnnxBuilder b = batch_model();
  b.input("cls", kFloat, {1, 1, 4});
  b.initializer_i64("minus_ones", {2}, {-1, -1});
  b.initializer_i64("all_minus_ones", {3}, {-1, -1, -1});
  b.initializer_i64("ones", {3}, {1, 1, 1});
  concat(b, {"n", "minus_ones"}, "requested");
  b.node("Equal", {"requested", "all_minus_ones"}, {"keep"}, "equal");
  b.node("Where", {"keep", "ones", "requested"}, {"target"}, "where");
  b.node("Expand", {"cls", "target"}, {"y"}, "expand");
  b.node("ConstantOfShape", {"target"}, {"z"}, "fill");
  b.output("y").output("z");
  Result<ir::Graph> g = import(b);
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  EXPECT_EQ(desc_of(*g, "y"), "float32[batch,1,4]");
  EXPECT_EQ(desc_of(*g, "z"), "float32[batch,1,1]");
}

TEST(DimsValues, SlicesAndArithmeticOnElements) {
  OnnxBuilder b = batch_model();
  b.initializer_i64("begin", {1}, {-1});
  b.initializer_i64("end", {1}, {-100});
  b.initializer_i64("axis0", {1}, {0});
  b.initializer_i64("back", {1}, {-1});
  b.initializer_i64("one_two", {2}, {1, 2});
  // Shape(x)[::-1] = [2, 2, 6, batch]; times [1, 2] pairwise on its last two: [6, batch * 2].
  b.node("Slice", {"s", "begin", "end", "axis0", "back"}, {"reversed"}, "reverse");
  b.initializer_i64("two", {1}, {2});
  b.initializer_i64("four", {1}, {4});
  b.node("Slice", {"reversed", "two", "four"}, {"tail"}, "tail");  // [6, batch]
  b.node("Mul", {"tail", "one_two"}, {"scaled"}, "scale");         // [6, ?]
  b.node("Mul", {"tail", "two"}, {"doubled"}, "double");           // [12, ?]
  b.initializer_i64("ones_", {2}, {1, 1});
  b.node("Mul", {"tail", "ones_"}, {"same"}, "same");  // [6, batch]
  concat(b, {"reversed", "scaled", "doubled", "same"}, "all");
  b.node("ConstantOfShape", {"all"}, {"y"}, "fill");
  b.output("y");
  Result<ir::Graph> g = import(b);
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  EXPECT_EQ(desc_of(*g, "y"), "float32[2,2,6,batch,6,?,12,?,6,batch]");
}

// A traced shape is checked as a known one, and the error shows its symbols.
TEST(DimsValues, ATracedNegativeDimIsAnErrorNamingTheShape) {
  OnnxBuilder b = batch_model();
  b.initializer_i64("four", {1}, {4});
  b.initializer_i64("six", {1}, {6});
  b.node("Sub", {"four", "six"}, {"minus_two"}, "sub");
  concat(b, {"n", "minus_two"}, "target");
  b.node("Reshape", {"x", "target"}, {"y"}, "reshape");
  b.output("y");
  Result<ir::Graph> g = import(b);
  ASSERT_FALSE(g.is_ok());
  EXPECT_NE(g.status().message().find("node 'reshape' (Reshape): shape [batch,-2] has a negative "
                                      "dim -2"),
            std::string::npos)
      << g.status().message();
}

// Guards: what cannot be traced stays unknown rather than guessed.
TEST(DimsValues, UntraceableElementsStayUnknown) {
  OnnxBuilder b = batch_model();
  b.input("k", onnx::TensorProto::INT64, {1});  // a shape fed by the user
  b.initializer_i64("six", {1}, {6});
  concat(b, {"n", "k", "six"}, "target");
  b.node("Reshape", {"x", "target"}, {"y"}, "reshape");
  // Cast to bool turns a 6 into a 1: not an element-preserving cast.
  onnx::NodeProto& cast = b.node("Cast", {"s"}, {"flags"}, "cast");
  testing::set_attr_int(cast, "to", onnx::TensorProto::BOOL);
  b.initializer_i64("sevens", {4}, {7, 7, 7, 7});
  b.node("Where", {"flags", "s", "sevens"}, {"picked"}, "where");
  b.node("ConstantOfShape", {"picked"}, {"z"}, "fill");
  b.output("y").output("z");
  Result<ir::Graph> g = import(b);
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  EXPECT_EQ(desc_of(*g, "y"), "float32[batch,?,6]");
  EXPECT_EQ(desc_of(*g, "z"), "float32[?,?,?,?]");
}

}  // namespace dims_values_test
}  // namespace kiln
