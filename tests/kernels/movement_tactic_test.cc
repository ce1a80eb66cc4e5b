// concat.copy, split.copy, transpose.strided, slice.strided, expand.strided, patches.strided,
// gather.constant_indices, gather.indices and the *.copy reshapes against the reference.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <numeric>

#include "kernels/tactic_test_util.h"

namespace kiln::testing {
namespace {

// A tensor of `dtype` whose elements are distinct (their flat index), so that any misplaced
// element shows.
Tensor iota(DType dtype, const Dims& dims) {
  Tensor f(DType::kF32, dims);
  std::iota(f.data<float>(), f.data<float>() + f.numel(), 0.0f);
  return *cast_tensor(f, dtype);
}

OpCase transpose_case(const Dims& x, std::optional<Ints> perm, DType dtype = DType::kF32) {
  OpCase c;
  c.op_type = "Transpose";
  c.opset = 13;
  if (perm) c.attrs = attrs({{"perm", *perm}});
  c.inputs = {in(iota(dtype, x))};
  return c;
}

TEST(TransposeTactic, EveryPermutationOfRanksOneToFour) {
  for (const Dims& x : {Dims{5}, Dims{3, 7}, Dims{2, 3, 5}, Dims{2, 3, 1, 5}}) {
    Ints perm(x.size());
    std::iota(perm.begin(), perm.end(), 0);
    do {
      expect_matches_reference("transpose.strided", transpose_case(x, perm), kPointTol);
    } while (std::next_permutation(perm.begin(), perm.end()));
    expect_matches_reference("transpose.strided", transpose_case(x, std::nullopt), kPointTol);
  }
}

TEST(TransposeTactic, LargeTilesRankFiveAndOtherDtypes) {
  // Dims past the 32 x 32 copy tiles, with tails.
  expect_matches_reference("transpose.strided", transpose_case({70, 45}, Ints{1, 0}), kPointTol);
  expect_matches_reference("transpose.strided", transpose_case({3, 40, 33}, Ints{0, 2, 1}),
                           kPointTol);
  expect_matches_reference("transpose.strided",
                           transpose_case({2, 3, 4, 5, 6}, Ints{4, 2, 0, 3, 1}), kPointTol);
  for (DType t : {DType::kI64, DType::kU8, DType::kF16, DType::kBool}) {
    expect_matches_reference("transpose.strided", transpose_case({3, 4, 5}, Ints{2, 0, 1}, t),
                             kPointTol);
  }
}

OpCase patches_case(const Dims& x, const Ints& kernel, DType dtype = DType::kF32) {
  OpCase c;
  c.op_type = "Patches";
  c.domain = "kiln";
  c.opset = 1;
  c.attrs = attrs({{"kernel_shape", kernel}});
  c.inputs = {in(iota(dtype, x))};
  return c;
}

TEST(PatchesTactic, MatchesReferenceOnOddShapesBatchesAndDtypes) {
  for (const auto& [x, k] :
       {std::pair{Dims{1, 3, 8, 12}, Ints{4, 4}}, std::pair{Dims{2, 5, 6, 9}, Ints{3, 3}},
        std::pair{Dims{1, 1, 7, 10}, Ints{7, 2}}, std::pair{Dims{3, 2, 4, 4}, Ints{1, 1}},
        std::pair{Dims{1, 3, 32, 48}, Ints{16, 16}}}) {
    expect_matches_reference("patches.strided", patches_case(x, k), kPointTol);
  }
  expect_matches_reference("patches.strided", patches_case({2, 3, 4, 6}, {2, 3}, DType::kF16),
                           kPointTol);
}

OpCase slice_case(const Dims& x, const Ints& starts, const Ints& ends, std::optional<Ints> axes,
                  std::optional<Ints> steps) {
  OpCase c;
  c.op_type = "Slice";
  c.opset = 13;
  auto ints = [](const Ints& v) {
    return constant(Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v));
  };
  c.inputs = {in(iota(DType::kF32, x)), ints(starts), ints(ends)};
  if (axes) c.inputs.push_back(ints(*axes));
  if (steps) {
    if (!axes) c.inputs.push_back(absent());
    c.inputs.push_back(ints(*steps));
  }
  return c;
}

// Rows of every length around the short-run copy's 8-element moves and its 64-element limit
// (kernels/cpu/movement.cc), one contiguous run a row.
TEST(SliceTactic, ContiguousRunsOfEveryLengthNearTheShortRunLimits) {
  for (int64_t n : {1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 70}) {
    SCOPED_TRACE(n);
    expect_matches_reference("slice.strided",
                             slice_case({3, 80}, {0, 5}, {3, 5 + n}, std::nullopt, std::nullopt),
                             kPointTol);
  }
}

TEST(SliceTactic, MatchesReferenceWithStepsNegativeIndicesAndClamping) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const Dims x{4, 7, 9};
  expect_matches_reference("slice.strided", slice_case(x, {1}, {3}, std::nullopt, std::nullopt),
                           kPointTol);
  expect_matches_reference("slice.strided",
                           slice_case(x, {0, 2}, {kMax, -1}, Ints{-1, 1}, Ints{2, 3}), kPointTol);
  expect_matches_reference("slice.strided", slice_case(x, {-1}, {-kMax}, Ints{2}, Ints{-1}),
                           kPointTol);
  expect_matches_reference("slice.strided", slice_case(x, {5, 6}, {0, 1}, Ints{1, 2}, Ints{-2, -3}),
                           kPointTol);
  expect_matches_reference(
      "slice.strided", slice_case(x, {0, 0, 0}, {4, 7, 9}, std::nullopt, std::nullopt), kPointTol);
  expect_matches_reference("slice.strided", slice_case(x, {3}, {3}, Ints{0}, std::nullopt),
                           kPointTol);  // empty
}

TEST(SliceTactic, ReadsAttributesBeforeOpset10) {
  OpCase c;
  c.op_type = "Slice";
  c.opset = 9;
  c.attrs = attrs({{"starts", Ints{1, -3}}, {"ends", Ints{3, 100}}, {"axes", Ints{0, 2}}});
  c.inputs = {in(iota(DType::kF32, {4, 5, 6}))};
  expect_matches_reference("slice.strided", c, kPointTol);
}

TEST(SliceTactic, RefusesRuntimeStarts) {
  OpCase c = slice_case({4, 5}, {1}, {3}, std::nullopt, std::nullopt);
  c.inputs[1].constant = false;
  expect_rejected("slice.strided", c, "starts");
}

OpCase expand_case(const Dims& x, const Ints& shape, DType dtype = DType::kF32) {
  OpCase c;
  c.op_type = "Expand";
  c.opset = 13;
  c.inputs = {in(iota(dtype, x)),
              constant(Tensor::from_vector<int64_t>({static_cast<int64_t>(shape.size())}, shape))};
  return c;
}

TEST(ExpandTactic, BroadcastsLeadingAndUnitAxes) {
  // A transformer's class token [1, 1, width] expanded to the batch.
  expect_matches_reference("expand.strided", expand_case({1, 1, 7}, {3, 1, 7}), kPointTol);
  expect_matches_reference("expand.strided", expand_case({3, 1}, {2, 3, 4}), kPointTol);
  expect_matches_reference("expand.strided", expand_case({1, 4, 1}, {3, 1, 5}), kPointTol);
  expect_matches_reference("expand.strided", expand_case({2, 3}, {2, 3}), kPointTol);
  expect_matches_reference("expand.strided", expand_case({}, {2, 2}), kPointTol);
  expect_matches_reference("expand.strided", expand_case({5}, {1}), kPointTol);
  for (DType t : {DType::kI64, DType::kU8, DType::kF16, DType::kBool}) {
    expect_matches_reference("expand.strided", expand_case({1, 3}, {4, 3}, t), kPointTol);
  }
  // A shape known only at run time (the exported ViT's, a Where of the batch size) reaches the
  // kernel as the engine's concrete output dims: the model-set test runs ViT-Tiny's.
}

OpCase gather_case(const Dims& x, int64_t axis, const Tensor& indices, DType dtype = DType::kF32) {
  OpCase c;
  c.op_type = "Gather";
  c.opset = 13;
  c.attrs = attrs({{"axis", axis}});
  c.inputs = {in(iota(dtype, x)), constant(indices)};
  return c;
}

Tensor ints64(const Dims& dims, const Ints& v) { return Tensor::from_vector<int64_t>(dims, v); }

TEST(GatherTactic, ConstantIndicesOnEveryAxis) {
  // A transformer's class token: x[:, 0] of [batch, tokens, width], a scalar index.
  expect_matches_reference("gather.constant_indices", gather_case({2, 5, 7}, 1, ints64({}, {0})),
                           kPointTol);
  expect_matches_reference("gather.constant_indices", gather_case({2, 5, 7}, -1, ints64({}, {-1})),
                           kPointTol);
  expect_matches_reference("gather.constant_indices",
                           gather_case({4, 3}, 0, ints64({2, 3}, {3, 0, -4, 1, 1, 2})), kPointTol);
  expect_matches_reference("gather.constant_indices",
                           gather_case({2, 3, 4, 5}, 2, ints64({3}, {2, -1, 0})), kPointTol);
  expect_matches_reference("gather.constant_indices",
                           gather_case({3, 6}, 1, Tensor::from_vector<int32_t>({2}, {5, -6})),
                           kPointTol);
  for (DType t : {DType::kI64, DType::kU8, DType::kF16}) {
    expect_matches_reference("gather.constant_indices",
                             gather_case({3, 4, 5}, 1, ints64({2}, {3, 0}), t), kPointTol);
  }
}

TEST(GatherTactic, RefusesRuntimeIndices) {
  OpCase c = gather_case({4, 5}, 0, ints64({1}, {2}));
  c.inputs[1].constant = false;
  expect_rejected("gather.constant_indices", c, "indices");
  expect_rejected("gather.indices", gather_case({4, 5}, 0, ints64({1}, {2})), "constant");
}

OpCase runtime_gather_case(const Dims& x, int64_t axis, const Tensor& indices,
                           DType dtype = DType::kF32) {
  OpCase c = gather_case(x, axis, indices, dtype);
  c.inputs[1].constant = false;
  return c;
}

// An embedding lookup: token ids [batch, tokens] into a [vocab, width] table.
TEST(GatherTactic, IndicesGivenAtRunTime) {
  expect_matches_reference("gather.indices",
                           runtime_gather_case({10, 6}, 0, ints64({2, 3}, {9, 0, -1, 4, 4, -10})),
                           kPointTol);
  expect_matches_reference("gather.indices", runtime_gather_case({2, 5, 7}, 1, ints64({}, {3})),
                           kPointTol);
  expect_matches_reference(
      "gather.indices",
      runtime_gather_case({3, 6}, -1, Tensor::from_vector<int32_t>({4}, {5, -6, 0, 2})), kPointTol);
  expect_matches_reference("gather.indices",
                           runtime_gather_case({5, 4}, 0, ints64({2}, {1, 3}), DType::kF16),
                           kPointTol);
}

TEST(GatherTactic, AnIndexOutOfRangeAtRunTimeIsAnErrorNamingIt) {
  for (const int64_t bad : {10, -11}) {
    Result<TacticRun> r =
        run_tactic("gather.indices", runtime_gather_case({10, 6}, 0, ints64({3}, {1, bad, 2})));
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.status().message().find(fmt::format(
                  "index {} is out of range for axis 0 of data [10x6] (valid: [-10, 9])", bad)),
              std::string::npos)
        << r.status().message();
  }
}

OpCase concat_case(const std::vector<Dims>& xs, int64_t axis, DType dtype = DType::kF32) {
  OpCase c;
  c.op_type = "Concat";
  c.opset = 13;
  c.attrs = attrs({{"axis", axis}});
  for (const Dims& x : xs) c.inputs.push_back(in(iota(dtype, x)));
  return c;
}

TEST(ConcatTactic, MatchesReferenceOnEveryAxis) {
  expect_matches_reference("concat.copy", concat_case({{2, 3, 4}}, 1), kPointTol);
  expect_matches_reference("concat.copy", concat_case({{1, 3, 4}, {2, 3, 4}, {3, 3, 4}}, 0),
                           kPointTol);
  expect_matches_reference("concat.copy", concat_case({{2, 1, 4}, {2, 5, 4}}, 1), kPointTol);
  expect_matches_reference("concat.copy", concat_case({{2, 3, 1}, {2, 3, 7}, {2, 3, 2}}, -1),
                           kPointTol);
  expect_matches_reference("concat.copy", concat_case({{2, 0, 4}, {2, 3, 4}}, 1), kPointTol);
  expect_matches_reference("concat.copy", concat_case({{5}, {3}}, 0, DType::kI64), kPointTol);
}

// Split with its sizes as the `split` input (opset 13 on), or none: equal parts.
OpCase split_case(const Dims& x, int64_t axis, std::optional<Ints> sizes, int outputs,
                  DType dtype = DType::kF32) {
  OpCase c;
  c.op_type = "Split";
  c.opset = 13;
  c.attrs = attrs({{"axis", axis}});
  c.inputs = {in(iota(dtype, x))};
  if (sizes) {
    c.inputs.push_back(
        constant(Tensor::from_vector<int64_t>({static_cast<int64_t>(sizes->size())}, *sizes)));
  }
  c.num_outputs = outputs;
  return c;
}

TEST(SplitTactic, MatchesReferenceOnEveryAxisAndSizes) {
  expect_matches_reference("split.copy", split_case({2, 3, 4}, 1, Ints{1, 2}, 2), kPointTol);
  expect_matches_reference("split.copy", split_case({6, 3, 4}, 0, Ints{1, 2, 3}, 3), kPointTol);
  expect_matches_reference("split.copy", split_case({2, 3, 7}, -1, Ints{3, 0, 4}, 3), kPointTol);
  expect_matches_reference("split.copy", split_case({1, 32, 5, 5}, 1, std::nullopt, 2), kPointTol);
  expect_matches_reference("split.copy", split_case({4, 9}, 1, std::nullopt, 3, DType::kI64),
                           kPointTol);
  expect_matches_reference("split.copy", split_case({3, 8}, 1, Ints{8}, 1, DType::kU8), kPointTol);
}

TEST(SplitTactic, ReadsTheAttributeBeforeOpset13AndNumOutputsFrom18) {
  OpCase c = split_case({2, 10, 3}, 1, std::nullopt, 2);
  c.opset = 11;
  c.attrs = attrs({{"axis", int64_t{1}}, {"split", Ints{7, 3}}});
  expect_matches_reference("split.copy", c, kPointTol);
  OpCase uneven = split_case({2, 10, 3}, 1, std::nullopt, 3);
  uneven.opset = 18;
  uneven.attrs = attrs({{"axis", int64_t{1}}, {"num_outputs", int64_t{3}}});  // 4 + 4 + 2
  expect_matches_reference("split.copy", uneven, kPointTol);
}

// Specs no valid one-node graph produces (strings, unknown ranks), built by hand.
TEST(MovementTactics, RefuseStringsAndUnknownRanks) {
  ir::Node node;
  node.name = "n";
  node.op_type = "Concat";
  node.inputs = {0, 1};
  node.outputs = {2};
  tactics::LayerSpec spec;
  spec.node = &node;
  spec.since_version = 13;
  spec.inputs = {ir::TensorDesc::of_dims(DType::kString, {2}),
                 ir::TensorDesc::of_dims(DType::kString, {3})};
  spec.outputs = {ir::TensorDesc::of_dims(DType::kString, {5})};
  spec.constants = {nullptr, nullptr};
  const std::string why = tactics::find_tactic("concat.copy")->why_not(spec);
  EXPECT_NE(why.find("string"), std::string::npos) << why;

  spec.inputs = {ir::TensorDesc::unknown_shape(DType::kF32),
                 ir::TensorDesc::of_dims(DType::kF32, {3})};
  spec.outputs = {ir::TensorDesc::unknown_shape(DType::kF32)};
  const std::string rank = tactics::find_tactic("concat.copy")->why_not(spec);
  EXPECT_NE(rank.find("unknown rank"), std::string::npos) << rank;

  expect_rejected("transpose.strided", transpose_case(Dims(9, 1), std::nullopt), "rank 9");
}

TEST(CopyTactics, ReshapesCopyTheirInput) {
  OpCase reshape;
  reshape.op_type = "Reshape";
  reshape.opset = 14;
  reshape.inputs = {in(iota(DType::kF32, {2, 3, 4})),
                    constant(Tensor::from_vector<int64_t>({2}, {4, -1}))};
  expect_matches_reference("reshape.copy", reshape, kPointTol);

  OpCase flatten;
  flatten.op_type = "Flatten";
  flatten.opset = 13;
  flatten.attrs = attrs({{"axis", int64_t{2}}});
  flatten.inputs = {in(iota(DType::kI64, {2, 3, 4}))};
  expect_matches_reference("flatten.copy", flatten, kPointTol);

  OpCase squeeze;
  squeeze.op_type = "Squeeze";
  squeeze.opset = 13;
  squeeze.inputs = {in(iota(DType::kF32, {2, 1, 4})),
                    constant(Tensor::from_vector<int64_t>({1}, {1}))};
  expect_matches_reference("squeeze.copy", squeeze, kPointTol);

  OpCase unsqueeze;
  unsqueeze.op_type = "Unsqueeze";
  unsqueeze.opset = 11;
  unsqueeze.attrs = attrs({{"axes", Ints{0, 3}}});
  unsqueeze.inputs = {in(iota(DType::kF32, {2, 4}))};
  expect_matches_reference("unsqueeze.copy", unsqueeze, kPointTol);

  OpCase identity;
  identity.op_type = "Identity";
  identity.inputs = {in(iota(DType::kF16, {3, 5}))};
  expect_matches_reference("identity.copy", identity, kPointTol);
}

}  // namespace
}  // namespace kiln::testing
