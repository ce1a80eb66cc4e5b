// Reshape, Flatten, Squeeze, Unsqueeze, Shape, Size, Expand.
#include "ir/graph.h"
#include "ops/shape_test_util.h"

namespace kiln::shape_test {
namespace shape_reshape_test {

const Tensor k2x3 = f32({2, 3}, {1, 2, 3, 4, 5, 6});

ir::Attributes attrs_int(const char* name, int64_t v) {
  ir::Attributes a;
  a.set(name, v);
  return a;
}
ir::Attributes attrs_ints(const char* name, std::vector<int64_t> v) {
  ir::Attributes a;
  a.set(name, std::move(v));
  return a;
}

// --- Reshape ---

TEST(ShapeReshape, InfersMinusOneAndCopiesZero) {
  expect_output({"Reshape", 17, {}, {in(k2x3), cin(i64({2}, {-1, 2}))}},
                f32({3, 2}, {1, 2, 3, 4, 5, 6}));
  expect_output({"Reshape", 17, {}, {in(k2x3), in(i64({3}, {0, 3, -1}))}},
                f32({2, 3, 1}, {1, 2, 3, 4, 5, 6}));
}

TEST(ShapeReshape, AllowZeroMakesZeroLiteral) {
  const Tensor empty = f32({0, 3}, {});
  expect_output({"Reshape", 14, attrs_int("allowzero", 1), {in(empty), in(i64({2}, {3, 0}))}},
                f32({3, 0}, {}));
  // Without allowzero, 0 copies the input dim.
  expect_output({"Reshape", 14, {}, {in(empty), in(i64({2}, {0, 3}))}}, f32({0, 3}, {}));
  // Before opset 14 (no allowzero) 0 always copies.
  expect_output({"Reshape", 13, {}, {in(k2x3), in(i64({2}, {0, 3}))}},
                f32({2, 3}, {1, 2, 3, 4, 5, 6}));
}

TEST(ShapeReshape, Errors) {
  expect_error({"Reshape", 17, {}, {in(k2x3), in(i64({2}, {-1, -1}))}}, StatusCode::kInvalidModel,
               "more than one -1");
  expect_error({"Reshape", 17, {}, {in(k2x3), in(i64({2}, {4, 2}))}}, StatusCode::kInvalidModel,
               "cannot reshape float32[2,3] to [4,2]");
  expect_error({"Reshape", 17, {}, {in(k2x3), in(i64({2}, {4, -1}))}}, StatusCode::kInvalidModel,
               "cannot reshape float32[2,3] to [4,-1]");
  expect_error({"Reshape", 17, {}, {in(k2x3), in(i64({2}, {-2, 3}))}}, StatusCode::kInvalidModel,
               "negative dim -2");
  expect_error({"Reshape", 17, {}, {in(k2x3), in(i64({3}, {1, 1, 0}))}}, StatusCode::kInvalidModel,
               "copies input dim 2");
  expect_error({"Reshape", 14, attrs_int("allowzero", 1), {in(k2x3), in(i64({2}, {0, -1}))}},
               StatusCode::kInvalidModel, "both 0");
  expect_error({"Reshape", 17, {}, {in(k2x3), in(f32({1}, {6}))}}, StatusCode::kInvalidModel,
               "shape");
}

TEST(ShapeReshape, SymbolicDims) {
  const auto x = desc(DType::kF32, {S("batch"), K(3), K(224), K(224)});
  const auto shape = desc(DType::kI64, {K(2)});
  EXPECT_EQ(inferred({"Reshape", 17, {}, {x, shape}, {std::nullopt, i64({2}, {0, -1})}}),
            "float32[batch,150528]");
  EXPECT_EQ(inferred({"Reshape", 17, {}, {x, shape}, {std::nullopt, i64({2}, {-1, 150528})}}),
            "float32[batch,150528]");
  EXPECT_EQ(inferred({"Reshape",
                      17,
                      {},
                      {x, desc(DType::kI64, {K(3)})},
                      {std::nullopt, i64({3}, {0, 3, -1})}}),
            "float32[batch,3,50176]");
  // The value of the shape is unknown: only the rank is.
  EXPECT_EQ(inferred({"Reshape", 17, {}, {x, shape}}), "float32[?,?]");
  // -1 that absorbs an unmatched symbol stays unknown unless the rest cancels exactly.
  EXPECT_EQ(inferred({"Reshape", 17, {}, {x, shape}, {std::nullopt, i64({2}, {3, -1})}}),
            "float32[3,?]");
  EXPECT_EQ(inferred({"Reshape",
                      17,
                      {},
                      {x, desc(DType::kI64, {K(4)})},
                      {std::nullopt, i64({4}, {3, 224, 224, -1})}}),
            "float32[3,224,224,batch]");
}

// --- Flatten ---

TEST(ShapeFlatten, Axes) {
  const Tensor x = f32({2, 3, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  expect_output({"Flatten", 13, {}, {in(x)}}, x.reshaped({2, 6}));
  expect_output({"Flatten", 13, attrs_int("axis", 0), {in(x)}}, x.reshaped({1, 12}));
  expect_output({"Flatten", 13, attrs_int("axis", 3), {in(x)}}, x.reshaped({12, 1}));
  expect_output({"Flatten", 13, attrs_int("axis", -1), {in(x)}}, x.reshaped({6, 2}));
  expect_error({"Flatten", 13, attrs_int("axis", 4), {in(x)}}, StatusCode::kInvalidModel,
               "axis 4 is out of range");
}

TEST(ShapeFlatten, KeepsBatchSymbol) {
  const auto x = desc(DType::kF32, {S("batch"), K(3), K(4), K(5)});
  EXPECT_EQ(inferred({"Flatten", 13, {}, {x}}), "float32[batch,60]");
  EXPECT_EQ(inferred({"Flatten", 13, attrs_int("axis", 2), {x}}), "float32[?,20]");
}

// --- Squeeze / Unsqueeze ---

TEST(ShapeSqueeze, AxesAttributeAndInput) {
  const Tensor x = f32({1, 3, 1}, {1, 2, 3});
  expect_output({"Squeeze", 11, attrs_ints("axes", {0}), {in(x)}}, f32({3, 1}, {1, 2, 3}));
  expect_output({"Squeeze", 13, {}, {in(x), in(i64({1}, {-1}))}}, f32({1, 3}, {1, 2, 3}));
  expect_output({"Squeeze", 13, {}, {in(x)}}, f32({3}, {1, 2, 3}));
  expect_error({"Squeeze", 13, {}, {in(x), in(i64({1}, {1}))}}, StatusCode::kInvalidModel,
               "cannot squeeze axis 1");
  expect_error({"Squeeze", 13, {}, {in(x), in(i64({1}, {3}))}}, StatusCode::kInvalidModel,
               "out of range");
  expect_error({"Squeeze", 13, {}, {in(x), in(i64({2}, {0, -3}))}}, StatusCode::kInvalidModel,
               "repeats");
}

TEST(ShapeSqueeze, SymbolicDims) {
  const auto x = desc(DType::kF32, {S("batch"), K(1), K(4)});
  EXPECT_EQ(inferred({"Squeeze", 11, attrs_ints("axes", {1}), {x}}), "float32[batch,4]");
  // Without axes a symbolic dim may be 1: the rank is unknown.
  EXPECT_EQ(inferred({"Squeeze", 13, {}, {x}}), "float32[?rank]");
}

TEST(ShapeUnsqueeze, AxesAttributeAndInput) {
  const Tensor x = f32({3}, {1, 2, 3});
  expect_output({"Unsqueeze", 11, attrs_ints("axes", {0, 2}), {in(x)}}, f32({1, 3, 1}, {1, 2, 3}));
  expect_output({"Unsqueeze", 13, {}, {in(x), in(i64({2}, {-1, 0}))}}, f32({1, 3, 1}, {1, 2, 3}));
  expect_error({"Unsqueeze", 13, {}, {in(x), in(i64({1}, {2}))}}, StatusCode::kInvalidModel,
               "out of range");
  expect_error({"Unsqueeze", 11, {}, {in(x)}}, StatusCode::kInvalidModel, "axes are required");
  const auto sym = desc(DType::kF32, {S("batch"), K(4)});
  EXPECT_EQ(inferred({"Unsqueeze", 11, attrs_ints("axes", {1}), {sym}}), "float32[batch,1,4]");
}

// --- Shape / Size ---

TEST(ShapeShape, ValuesAndStartEnd) {
  const Tensor x = f32({2, 3, 4}, std::vector<float>(24, 0.0f));
  expect_output({"Shape", 13, {}, {in(x)}}, i64({3}, {2, 3, 4}));
  ir::Attributes a;
  a.set("start", int64_t{1});
  expect_output({"Shape", 15, a, {in(x)}}, i64({2}, {3, 4}));
  a.set("start", int64_t{-10});  // clamped to 0
  a.set("end", int64_t{-1});
  expect_output({"Shape", 15, a, {in(x)}}, i64({2}, {2, 3}));
  a.set("start", int64_t{2});
  a.set("end", int64_t{1});
  expect_output({"Shape", 15, a, {in(x)}}, i64({0}, {}));
  expect_output({"Size", 13, {}, {in(x)}}, Tensor::scalar<int64_t>(24));
}

TEST(ShapeShape, FoldsStaticShapesOnly) {
  auto r = infer({"Shape", 15, {}, {desc(DType::kF32, {K(2), K(5)})}});
  ASSERT_TRUE(r.is_ok());
  ASSERT_TRUE(r->values[0].has_value());
  EXPECT_EQ(r->values[0]->to_int64_vector(), (std::vector<int64_t>{2, 5}));
  r = infer({"Shape", 15, {}, {desc(DType::kF32, {S("batch"), K(5)})}});
  ASSERT_TRUE(r.is_ok());
  EXPECT_FALSE(r->values[0].has_value());
  EXPECT_EQ(r->outputs[0].to_string(), "int64[2]");
  // The known part of a partially symbolic shape still folds.
  ir::Attributes a;
  a.set("start", int64_t{1});
  r = infer({"Shape", 15, a, {desc(DType::kF32, {S("batch"), K(5)})}});
  ASSERT_TRUE(r.is_ok() && r->values[0].has_value());
  EXPECT_EQ(r->values[0]->to_int64_vector(), (std::vector<int64_t>{5}));
  r = infer({"Size", 13, {}, {desc(DType::kF32, {K(2), K(5)})}});
  ASSERT_TRUE(r.is_ok() && r->values[0].has_value());
  EXPECT_EQ(r->values[0]->value_as_int(0), 10);
  r = infer({"Size", 13, {}, {desc(DType::kF32, {S("n")})}});
  ASSERT_TRUE(r.is_ok());
  EXPECT_FALSE(r->values[0].has_value());
}

// Shape -> Concat -> Reshape folds during graph inference, keeping the batch symbol.
TEST(ShapeShape, ShapeChainsFoldInGraphInference) {
  ir::Graph g;
  g.opset_imports[""] = 17;
  const ir::ValueId x = g.add_value("x", desc(DType::kF32, {S("batch"), K(3), K(224), K(224)}));
  g.value(x).is_graph_input = true;
  g.inputs.push_back(x);
  const ir::ValueId minus_one = g.add_value("m1", ir::TensorDesc::of_dims(DType::kI64, {1}));
  g.value(minus_one).initializer = i64({1}, {-1});
  const ir::ValueId tail = g.add_value("tail");
  const ir::ValueId shape = g.add_value("shape");
  const ir::ValueId y = g.add_value("y");
  g.value(y).is_graph_output = true;
  g.outputs.push_back(y);
  ir::Node shape_node{"s", "Shape", "", {x}, {tail}, attrs_int("start", 1), 17};
  ir::Node concat_node{"c", "Concat", "", {minus_one, tail}, {shape}, attrs_int("axis", 0), 17};
  ir::Node reshape_node{"r", "Reshape", "", {x, shape}, {y}, {}, 17};
  g.nodes = {shape_node, concat_node, reshape_node};
  ASSERT_TRUE(ops::check_graph_ops(g).is_ok());
  const Status s = ops::infer_graph_shapes(g);
  ASSERT_TRUE(s.is_ok()) << s.to_string();
  EXPECT_EQ(g.value(tail).desc.to_string(), "int64[3]");
  EXPECT_EQ(g.value(shape).desc.to_string(), "int64[4]");
  EXPECT_EQ(g.value(y).desc.to_string(), "float32[batch,3,224,224]");
}

// --- Expand ---

TEST(ShapeExpand, BidirectionalBroadcast) {
  const Tensor x = f32({3, 1}, {1, 2, 3});
  expect_output({"Expand", 13, {}, {in(x), in(i64({3}, {2, 1, 2}))}},
                f32({2, 3, 2}, {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  // The shape may be smaller than the input: the output keeps the input's dims.
  expect_output({"Expand", 13, {}, {in(x), in(i64({1}, {1}))}}, f32({3, 1}, {1, 2, 3}));
  expect_error({"Expand", 13, {}, {in(x), in(i64({2}, {2, 2}))}}, StatusCode::kInvalidModel,
               "cannot be broadcast");
  expect_error({"Expand", 13, {}, {in(x), in(i64({2}, {-1, 2}))}}, StatusCode::kInvalidModel,
               "negative");
}

TEST(ShapeExpand, SymbolicDims) {
  const auto x = desc(DType::kF32, {S("batch"), K(1)});
  EXPECT_EQ(
      inferred(
          {"Expand", 13, {}, {x, desc(DType::kI64, {K(2)})}, {std::nullopt, i64({2}, {1, 4})}}),
      "float32[batch,4]");
  EXPECT_EQ(inferred({"Expand", 13, {}, {x, desc(DType::kI64, {K(3)})}}), "float32[?,?,?]");
}

}  // namespace shape_reshape_test
}  // namespace kiln::shape_test
