// Transpose, Concat, Split, Slice, Tile, Pad, DepthToSpace, SpaceToDepth, Trilu.
#include <limits>

#include "ops/shape_test_util.h"

namespace kiln::shape_test {
namespace shape_layout_test {

const Tensor k2x3 = f32({2, 3}, {1, 2, 3, 4, 5, 6});
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

template <typename V>
ir::Attributes attr(const char* name, V v) {
  ir::Attributes a;
  a.set(name, std::move(v));
  return a;
}

// --- Transpose ---

TEST(ShapeTranspose, DefaultReversesAndPerm) {
  expect_output({"Transpose", 13, {}, {in(k2x3)}}, f32({3, 2}, {1, 4, 2, 5, 3, 6}));
  const Tensor x = f32({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  expect_output({"Transpose", 13, attr("perm", std::vector<int64_t>{1, 0, 2}), {in(x)}},
                f32({2, 2, 2}, {0, 1, 4, 5, 2, 3, 6, 7}));
  expect_output({"Transpose", 13, {}, {in(tensor<uint8_t>({2, 2}, {1, 2, 3, 4}))}},
                tensor<uint8_t>({2, 2}, {1, 3, 2, 4}));
  expect_error({"Transpose", 13, attr("perm", std::vector<int64_t>{0, 0}), {in(k2x3)}},
               StatusCode::kInvalidModel, "not a permutation");
  expect_error({"Transpose", 13, attr("perm", std::vector<int64_t>{0}), {in(k2x3)}},
               StatusCode::kInvalidModel, "rank 2");
  const auto sym = desc(DType::kF32, {S("batch"), K(3), S("seq")});
  EXPECT_EQ(inferred({"Transpose", 13, attr("perm", std::vector<int64_t>{2, 0, 1}), {sym}}),
            "float32[seq,batch,3]");
}

// --- Concat ---

TEST(ShapeConcat, AxesAndEmptyInputs) {
  const Tensor b = f32({2, 1}, {7, 8});
  expect_output({"Concat", 13, attr("axis", int64_t{1}), {in(k2x3), in(b)}},
                f32({2, 4}, {1, 2, 3, 7, 4, 5, 6, 8}));
  expect_output({"Concat", 13, attr("axis", int64_t{-2}), {in(k2x3), in(f32({1, 3}, {7, 8, 9}))}},
                f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}));
  expect_output({"Concat", 13, attr("axis", int64_t{1}), {in(f32({2, 0}, {})), in(b)}}, b);
  expect_error({"Concat", 13, attr("axis", int64_t{0}), {in(k2x3), in(b)}},
               StatusCode::kInvalidModel, "must match");
  expect_error({"Concat", 13, attr("axis", int64_t{2}), {in(k2x3), in(b)}},
               StatusCode::kInvalidModel, "out of range");
  expect_error({"Concat", 13, attr("axis", int64_t{0}), {in(k2x3), in(i64({1}, {1}))}},
               StatusCode::kInvalidModel, "input 1");
}

TEST(ShapeConcat, SymbolicDims) {
  const auto a = desc(DType::kF32, {S("batch"), K(3)});
  const auto b = desc(DType::kF32, {S("batch"), K(5)});
  EXPECT_EQ(inferred({"Concat", 13, attr("axis", int64_t{1}), {a, b}}), "float32[batch,8]");
  EXPECT_EQ(inferred({"Concat", 13, attr("axis", int64_t{0}), {a, a}}), "float32[?,3]");
}

TEST(ShapeConcat, AxisWhoseSumOverflowsIsRejected) {
  EXPECT_EQ(inferred({"Concat",
                      13,
                      attr("axis", int64_t{0}),
                      {desc(DType::kF32, {K(kMax)}), desc(DType::kF32, {K(1)})}}),
            "InvalidModel: node 'node0' (Concat): the concatenated axis overflows int64: "
            "9223372036854775807 + 1");
}

// --- Split ---

TEST(ShapeSplit, SizesFromAttributeInputAndEqual) {
  const Tensor x = f32({5}, {1, 2, 3, 4, 5});
  OpCase c{"Split", 11, attr("split", std::vector<int64_t>{2, 3}), {in(x)}, 2};
  auto out = run(c);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(testing::compare_tensors(out[0], f32({2}, {1, 2})), "");
  EXPECT_EQ(testing::compare_tensors(out[1], f32({3}, {3, 4, 5})), "");
  out = run({"Split", 13, {}, {in(x), in(i64({2}, {4, 1}))}, 2});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(testing::compare_tensors(out[1], f32({1}, {5})), "");
  out = run({"Split", 13, attr("axis", int64_t{-1}), {in(k2x3)}, 3});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(testing::compare_tensors(out[2], f32({2, 1}, {3, 6})), "");
}

TEST(ShapeSplit, NumOutputsUnevenLastChunk) {
  const Tensor x = f32({7}, {1, 2, 3, 4, 5, 6, 7});
  auto out = run({"Split", 18, attr("num_outputs", int64_t{3}), {in(x)}, 3});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(testing::compare_tensors(out[0], f32({3}, {1, 2, 3})), "");
  EXPECT_EQ(testing::compare_tensors(out[2], f32({1}, {7})), "");
  expect_error({"Split", 13, {}, {in(x)}, 3}, StatusCode::kInvalidModel, "equal outputs");
  expect_error({"Split", 18, attr("num_outputs", int64_t{2}), {in(x)}, 3},
               StatusCode::kInvalidModel, "num_outputs is 2");
  expect_error({"Split", 13, {}, {in(x), in(i64({2}, {3, 3}))}, 2}, StatusCode::kInvalidModel,
               "sums to 6");
  expect_error({"Split", 13, {}, {in(x), in(i64({2}, {8, -1}))}, 2}, StatusCode::kInvalidModel,
               "negative");
}

TEST(ShapeSplit, SizesWhoseSumOverflowsAreRejected) {
  const Tensor x = f32({5}, {1, 2, 3, 4, 5});
  expect_error({"Split", 13, {}, {in(x), in(i64({2}, {2, kMax}))}, 2}, StatusCode::kInvalidModel,
               "the sum of split [2, 9223372036854775807] overflows int64");
  expect_error({"Split", 11, attr("split", std::vector<int64_t>{kMax, 4}), {in(x)}, 2},
               StatusCode::kInvalidModel, "overflows int64");
}

// --- Slice ---

TEST(ShapeSlice, InputsStepsAndClamping) {
  const Tensor x = f32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  expect_output({"Slice", 13, {}, {in(x), in(i64({2}, {0, 1})), in(i64({2}, {1, 3}))}},
                f32({1, 2}, {2, 3}));
  // Negative step walks backwards; INT64_MIN-like ends clamp to -1 (through the start).
  expect_output(
      {"Slice",
       13,
       {},
       {in(x), in(i64({1}, {-1})), in(i64({1}, {-kMax})), in(i64({1}, {1})), in(i64({1}, {-1}))}},
      f32({2, 4}, {4, 3, 2, 1, 8, 7, 6, 5}));
  // INT64_MAX end, step 2, negative axis.
  expect_output(
      {"Slice",
       13,
       {},
       {in(x), in(i64({1}, {1})), in(i64({1}, {kMax})), in(i64({1}, {-1})), in(i64({1}, {2}))}},
      f32({2, 2}, {2, 4, 6, 8}));
  // Out-of-range starts clamp: an empty result.
  expect_output(
      {"Slice", 13, {}, {in(x), in(i64({1}, {10})), in(i64({1}, {20})), in(i64({1}, {1}))}},
      f32({2, 0}, {}));
  // int32 parameters.
  expect_output({"Slice", 13, {}, {in(x), in(i32({1}, {1})), in(i32({1}, {2}))}},
                f32({1, 4}, {5, 6, 7, 8}));
}

TEST(ShapeSlice, Opset1Attributes) {
  const Tensor x = f32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  ir::Attributes a;
  a.set("starts", std::vector<int64_t>{1, -2});
  a.set("ends", std::vector<int64_t>{2, 1000});
  expect_output({"Slice", 9, a, {in(x)}}, f32({1, 2}, {7, 8}));
  a.set("axes", std::vector<int64_t>{1, 0});
  expect_output({"Slice", 9, a, {in(x)}}, f32({2, 1}, {2, 6}));
}

TEST(ShapeSlice, Errors) {
  const Tensor x = f32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  expect_error(
      {"Slice",
       13,
       {},
       {in(x), in(i64({1}, {0})), in(i64({1}, {1})), in(i64({1}, {0})), in(i64({1}, {0}))}},
      StatusCode::kInvalidModel, "contains 0");
  expect_error({"Slice", 13, {}, {in(x), in(i64({1}, {0})), in(i64({1}, {1})), in(i64({1}, {2}))}},
               StatusCode::kInvalidModel, "out of range");
  expect_error({"Slice", 13, {}, {in(x), in(i64({2}, {0, 0})), in(i64({1}, {1}))}},
               StatusCode::kInvalidModel, "same length");
  expect_error(
      {"Slice", 13, {}, {in(x), in(i64({2}, {0, 0})), in(i64({2}, {1, 1})), in(i64({2}, {1, -1}))}},
      StatusCode::kInvalidModel, "repeats");
}

TEST(ShapeSlice, SymbolicDims) {
  const auto x = desc(DType::kF32, {S("batch"), K(10)});
  const auto one = desc(DType::kI64, {K(1)});
  EXPECT_EQ(inferred({"Slice",
                      13,
                      {},
                      {x, one, one, one},
                      {std::nullopt, i64({1}, {2}), i64({1}, {-1}), i64({1}, {1})}}),
            "float32[batch,7]");
  EXPECT_EQ(inferred({"Slice",
                      13,
                      {},
                      {x, one, one, one},
                      {std::nullopt, i64({1}, {0}), i64({1}, {kMax}), i64({1}, {0})}}),
            "float32[batch,10]");
  EXPECT_EQ(inferred({"Slice",
                      13,
                      {},
                      {x, one, one, one},
                      {std::nullopt, std::nullopt, std::nullopt, i64({1}, {1})}}),
            "float32[batch,?]");
  EXPECT_EQ(inferred({"Slice", 13, {}, {x, one, one}}), "float32[?,10]");
}

// --- Tile ---

TEST(ShapeTile, RepeatsAndErrors) {
  const Tensor x = f32({2, 1}, {1, 2});
  expect_output({"Tile", 13, {}, {in(x), in(i64({2}, {2, 3}))}},
                f32({4, 3}, {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2}));
  expect_output({"Tile", 13, {}, {in(x), in(i64({2}, {0, 1}))}}, f32({0, 1}, {}));
  expect_output({"Tile", 13, {}, {in(f32({1, 2, 2}, {1, 2, 3, 4})), in(i64({3}, {2, 1, 2}))}},
                f32({2, 2, 4}, {1, 2, 1, 2, 3, 4, 3, 4, 1, 2, 1, 2, 3, 4, 3, 4}));
  expect_error({"Tile", 13, {}, {in(x), in(i64({2}, {-1, 1}))}}, StatusCode::kInvalidModel,
               "negative");
  expect_error({"Tile", 13, {}, {in(x), in(i64({1}, {2}))}}, StatusCode::kInvalidModel, "rank 2");
  EXPECT_EQ(inferred({"Tile",
                      13,
                      {},
                      {desc(DType::kF32, {S("b"), K(2)}), desc(DType::kI64, {K(2)})},
                      {std::nullopt, i64({2}, {1, 3})}}),
            "float32[b,6]");
}

TEST(ShapeTile, OutputAboveTheExecutorsMemoryLimitIsRefused) {
  // 1 Ki floats tiled 2048 times: 8 MiB, above a 4 MiB per-tensor limit. Nothing is allocated.
  const Tensor x = f32({1024}, std::vector<float>(1024, 1.0f));
  const OpCase c{"Tile", 13, {}, {in(x), in(i64({1}, {2048}))}};
  auto r = testing::run_op(c, {.max_tensor_bytes = 4 << 20});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("node 'node0' (Tile): output 0 'out0' float32[2097152] "
                                      "needs 8 MiB, more than the executor's limit of 4 MiB"),
            std::string::npos)
      << r.status().to_string();
  EXPECT_TRUE(testing::run_op(c, {.max_tensor_bytes = 8 << 20}).is_ok());
}

// --- Pad ---

TEST(ShapePad, ModesAndNegativePads) {
  const Tensor x = f32({1, 3}, {1, 2, 3});
  const Tensor pads = i64({4}, {0, 2, 0, 1});
  expect_output({"Pad", 13, {}, {in(x), in(pads), in(Tensor::scalar<float>(9))}},
                f32({1, 6}, {9, 9, 1, 2, 3, 9}));
  expect_output({"Pad", 13, attr("mode", std::string("reflect")), {in(x), in(pads)}},
                f32({1, 6}, {3, 2, 1, 2, 3, 2}));
  expect_output({"Pad", 13, attr("mode", std::string("edge")), {in(x), in(pads)}},
                f32({1, 6}, {1, 1, 1, 2, 3, 3}));
  expect_output({"Pad", 19, attr("mode", std::string("wrap")), {in(x), in(pads)}},
                f32({1, 6}, {2, 3, 1, 2, 3, 1}));
  // Negative pads crop; wrap then wraps the cropped row [2, 3].
  expect_output(
      {"Pad", 19, attr("mode", std::string("wrap")), {in(x), in(i64({4}, {0, -1, 0, 1}))}},
      f32({1, 3}, {2, 3, 2}));
  // Opset 2: pads and value attributes.
  ir::Attributes a;
  a.set("pads", std::vector<int64_t>{1, 0, 0, 0});
  a.set("value", 5.0f);
  expect_output({"Pad", 2, a, {in(x)}}, f32({2, 3}, {5, 5, 5, 1, 2, 3}));
  // Opset 18: axes input.
  expect_output({"Pad", 18, {}, {in(x), in(i64({2}, {1, 0})), none(), in(i64({1}, {-1}))}},
                f32({1, 4}, {0, 1, 2, 3}));
}

TEST(ShapePad, Errors) {
  const Tensor x = f32({1, 3}, {1, 2, 3});
  expect_error({"Pad", 13, {}, {in(x), in(i64({2}, {1, 1}))}}, StatusCode::kInvalidModel,
               "2 x 2 entries");
  expect_error({"Pad", 13, {}, {in(x), in(i64({4}, {0, -4, 0, 0}))}}, StatusCode::kInvalidModel,
               "negative");
  expect_error({"Pad", 13, {}, {in(x), in(i64({4}, {0, -5, 0, 3}))}}, StatusCode::kInvalidModel,
               "crop more");
  expect_error({"Pad", 13, attr("mode", std::string("wrap")), {in(x), in(i64({4}, {0, 1, 0, 0}))}},
               StatusCode::kInvalidModel, "opset 19");
  expect_error({"Pad", 13, attr("mode", std::string("bogus")), {in(x), in(i64({4}, {0, 1, 0, 0}))}},
               StatusCode::kInvalidModel, "unknown mode");
  expect_error({"Pad",
                13,
                attr("mode", std::string("edge")),
                {in(f32({1, 0}, {})), in(i64({4}, {0, 1, 0, 0}))}},
               StatusCode::kInvalidModel, "no elements");
  expect_error({"Pad", 13, {}, {in(x), in(i64({4}, {0, 1, 0, 0})), in(i64({}, {1}))}},
               StatusCode::kInvalidModel, "constant_value");
}

// --- DepthToSpace / SpaceToDepth ---

TEST(ShapeDepthToSpace, DcrCrdAndInverse) {
  // [1, 4, 1, 1] channels 0..3, blocksize 2.
  const Tensor x = f32({1, 4, 1, 1}, {0, 1, 2, 3});
  expect_output({"DepthToSpace", 13, attr("blocksize", int64_t{2}), {in(x)}},
                f32({1, 1, 2, 2}, {0, 1, 2, 3}));
  // 8 channels: DCR and CRD differ.
  const Tensor y = f32({1, 8, 1, 1}, {0, 1, 2, 3, 4, 5, 6, 7});
  ir::Attributes a = attr("blocksize", int64_t{2});
  expect_output({"DepthToSpace", 13, a, {in(y)}}, f32({1, 2, 2, 2}, {0, 2, 4, 6, 1, 3, 5, 7}));
  a.set("mode", std::string("CRD"));
  expect_output({"DepthToSpace", 13, a, {in(y)}}, f32({1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}));
  expect_output(
      {"SpaceToDepth", 13, attr("blocksize", int64_t{2}), {in(f32({1, 1, 2, 2}, {0, 1, 2, 3}))}},
      f32({1, 4, 1, 1}, {0, 1, 2, 3}));
  expect_error({"DepthToSpace", 13, attr("blocksize", int64_t{3}), {in(x)}},
               StatusCode::kInvalidModel, "not divisible");
  expect_error({"SpaceToDepth", 13, attr("blocksize", int64_t{0}), {in(x)}},
               StatusCode::kInvalidModel, "positive");
  EXPECT_EQ(inferred({"DepthToSpace",
                      13,
                      attr("blocksize", int64_t{2}),
                      {desc(DType::kF32, {S("n"), K(8), K(3), S("w")})}}),
            "float32[n,2,6,?]");
  // A declared height near INT64_MAX cannot be multiplied by the blocksize.
  EXPECT_EQ(inferred({"DepthToSpace",
                      13,
                      attr("blocksize", int64_t{2}),
                      {desc(DType::kF32, {S("n"), K(8), K(kMax / 2 + 1), K(1)})}}),
            "InvalidModel: node 'node0' (DepthToSpace): dim x blocksize overflows int64: "
            "4611686018427387904 * 2");
}

// --- Trilu ---

TEST(ShapeTrilu, UpperLowerAndK) {
  const Tensor x = f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  expect_output({"Trilu", 14, {}, {in(x)}}, f32({3, 3}, {1, 2, 3, 0, 5, 6, 0, 0, 9}));
  expect_output({"Trilu", 14, attr("upper", int64_t{0}), {in(x), in(Tensor::scalar<int64_t>(-1))}},
                f32({3, 3}, {0, 0, 0, 4, 0, 0, 7, 8, 0}));
  expect_output({"Trilu", 14, {}, {in(x), in(Tensor::scalar<int64_t>(1))}},
                f32({3, 3}, {0, 2, 3, 0, 0, 6, 0, 0, 0}));
  expect_error({"Trilu", 14, {}, {in(f32({3}, {1, 2, 3}))}}, StatusCode::kInvalidModel,
               "rank >= 2");
}

}  // namespace shape_layout_test
}  // namespace kiln::shape_test
