// Builtin tactics that split rows or elements over the context's pool (element-wise, softmax,
// layer norm, pooling, strided copies, Concat and Split) give the reference's results with a pool
// of 2 and 3 threads, on sizes that do split (above the grain) and with tails.
#include <gtest/gtest.h>

#include "kernels/tactic_test_util.h"
#include "parallel/thread_pool.h"
#include "runtime/reference_executor.h"

namespace kiln::testing {
namespace {

void expect_threaded_matches_reference(const std::string& name, const OpCase& c, int threads) {
  SCOPED_TRACE(name + " " + case_text(c) + " threads " + std::to_string(threads));
  auto og = build_op_graph(c);
  ASSERT_TRUE(og.is_ok()) << og.status().to_string();
  const tactics::Tactic* tactic = tactics::find_tactic(name);
  ASSERT_NE(tactic, nullptr);
  const tactics::LayerSpec spec = layer_spec(og->graph);
  ASSERT_EQ(tactic->why_not(spec), "");
  auto kernel = tactic->instantiate(spec);
  ASSERT_TRUE(kernel.is_ok()) << kernel.status().to_string();
  parallel::ThreadPool pool(threads);
  (*kernel)->set_thread_pool(&pool);
  auto got = run_layer_kernel(**kernel, *og);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  EXPECT_EQ(got->run_allocations, 0);
  auto want = run_op(c);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  for (size_t i = 0; i < want->size(); ++i) {
    EXPECT_EQ(compare_tensors(got->outputs[i], (*want)[i], kPointTol), "") << "output " << i;
  }
}

TEST(ThreadedTactics, UnarySplitsElements) {
  for (int threads : {2, 3}) {
    OpCase c{.op_type = "Sigmoid", .inputs = {in(random_f32({3, 97, 131}, 1))}};
    expect_threaded_matches_reference("eltwise.sigmoid.f32", c, threads);
  }
}

TEST(ThreadedTactics, SoftmaxSplitsRows) {
  for (int threads : {2, 3}) {
    OpCase c{.op_type = "Softmax", .opset = 13, .inputs = {in(random_f32({3, 301, 97}, 2))}};
    expect_threaded_matches_reference("softmax.f32", c, threads);
  }
}

TEST(ThreadedTactics, LayerNormSplitsRowsAndTheirStatistics) {
  for (int threads : {2, 3}) {
    OpCase c{.op_type = "LayerNormalization",
             .attrs = attrs({{"axis", int64_t{-1}}}),
             .inputs = {in(random_f32({5, 197, 96}, 3)), constant(random_f32({96}, 4)),
                        constant(random_f32({96}, 5))},
             .num_outputs = 3};
    expect_threaded_matches_reference("layernorm.f32", c, threads);
  }
}

// Shares of the whole that start and end inside the parts' chunks, at batch 1 (one chunk a part:
// YOLO's C2f split) and at batch 3 (a share spans rows of chunks).
TEST(ThreadedTactics, ConcatAndSplitShareTheWholeCopy) {
  for (int threads : {2, 3}) {
    for (int64_t n : {1, 3}) {
      OpCase split{.op_type = "Split",
                   .opset = 13,
                   .attrs = attrs({{"axis", int64_t{1}}}),
                   .inputs = {in(random_f32({n, 48, 41, 43}, 6)),
                              constant(Tensor::from_vector<int64_t>({3}, {16, 5, 27}))},
                   .num_outputs = 3};
      expect_threaded_matches_reference("split.copy", split, threads);
      OpCase concat{
          .op_type = "Concat",
          .opset = 13,
          .attrs = attrs({{"axis", int64_t{1}}}),
          .inputs = {in(random_f32({n, 16, 41, 43}, 7)), in(random_f32({n, 5, 41, 43}, 8)),
                     in(random_f32({n, 27, 41, 43}, 9))}};
      expect_threaded_matches_reference("concat.copy", concat, threads);
    }
  }
}

// Nearest (the columns' gather) and linear (rows mixed in each part's own scratch row).
TEST(ThreadedTactics, ResizeSplitsOutputRows) {
  for (int threads : {2, 3}) {
    for (const char* mode : {"nearest", "linear"}) {
      OpCase c{.op_type = "Resize",
               .opset = 13,
               .attrs = attrs({{"mode", std::string(mode)}}),
               .inputs = {in(random_f32({1, 37, 40, 41}, 10)), absent(),
                          constant(Tensor::from_vector<float>({4}, {1, 1, 2, 2}))}};
      expect_threaded_matches_reference("resize.separable.f32", c, threads);
    }
  }
}

TEST(ThreadedTactics, PoolingSplitsOutputRows) {
  // 47 planes of 17 output rows: 799, split mid-plane by 2 and 3 threads (grain 32768 / (18 * 9)).
  Tensor u8(DType::kU8, {1, 47, 33, 35});
  for (int64_t i = 0; i < u8.numel(); ++i) u8.data<uint8_t>()[i] = static_cast<uint8_t>(i * 37);
  const ir::Attributes window =
      attrs({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}});
  for (int threads : {2, 3}) {
    OpCase max{
        .op_type = "MaxPool", .attrs = window, .inputs = {in(random_f32({1, 47, 33, 35}, 6))}};
    expect_threaded_matches_reference("pool.max.f32", max, threads);
    OpCase avg = max;
    avg.op_type = "AveragePool";
    expect_threaded_matches_reference("pool.avg.f32", avg, threads);
    OpCase q = max;
    q.inputs = {in(u8)};
    expect_threaded_matches_reference("pool.max.u8", q, threads);
  }
}

// Slices and broadcasts split their outermost axis (each above the grain, with a tail part);
// transposes, given a pool, stay on one thread.
// The byte transpose's parts cross images (3 images of 196 16-row blocks; 2 of 4).
TEST(ThreadedTactics, ByteTransposesSplitBlocksAcrossImages) {
  for (int threads : {2, 3}) {
    Tensor x(DType::kU8, {3, 64, 56, 56});
    for (int64_t i = 0; i < x.numel(); ++i) x.data<uint8_t>()[i] = static_cast<uint8_t>(i * 7);
    expect_threaded_matches_reference(
        "transpose.nchw_nhwc.bytes.sse2",
        {.op_type = "Transpose", .attrs = attrs({{"perm", Ints{0, 2, 3, 1}}}), .inputs = {in(x)}},
        threads);
    // Three channels (an RGB input): whole words, but only the part's own bytes at its end.
    Tensor rgb(DType::kU8, {2, 3, 40, 40});
    for (int64_t i = 0; i < rgb.numel(); ++i) rgb.data<uint8_t>()[i] = static_cast<uint8_t>(i * 3);
    expect_threaded_matches_reference(
        "transpose.nchw_nhwc.bytes.sse2",
        {.op_type = "Transpose", .attrs = attrs({{"perm", Ints{0, 2, 3, 1}}}), .inputs = {in(rgb)}},
        threads);
    Tensor y(DType::kU8, {2, 56, 56, 64});
    for (int64_t i = 0; i < y.numel(); ++i) y.data<uint8_t>()[i] = static_cast<uint8_t>(i * 5);
    expect_threaded_matches_reference(
        "transpose.nchw_nhwc.bytes.sse2",
        {.op_type = "Transpose", .attrs = attrs({{"perm", Ints{0, 3, 1, 2}}}), .inputs = {in(y)}},
        threads);
  }
}

TEST(ThreadedTactics, StridedCopiesSplitTheirOutermostAxis) {
  for (int threads : {2, 3}) {
    OpCase t{.op_type = "Transpose",
             .opset = 13,
             .attrs = attrs({{"perm", std::vector<int64_t>{2, 0, 1}}}),
             .inputs = {in(random_f32({30, 9, 61}, 6))}};
    expect_threaded_matches_reference("transpose.strided", t, threads);
    OpCase heads{.op_type = "Transpose",
                 .opset = 13,
                 .attrs = attrs({{"perm", std::vector<int64_t>{1, 0, 2}}}),
                 .inputs = {in(random_f32({197, 3, 64}, 7))}};
    expect_threaded_matches_reference("transpose.strided", heads, threads);
    auto ints = [](std::vector<int64_t> v) {
      return constant(Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v));
    };
    OpCase s{.op_type = "Slice",
             .opset = 13,
             .inputs = {in(random_f32({101, 3, 400}, 8)), ints({100, 0}), ints({-102, 400}),
                        ints({0, 2}), ints({-1, 2})}};
    expect_threaded_matches_reference("slice.strided", s, threads);
    OpCase e{.op_type = "Expand",
             .opset = 13,
             .inputs = {in(random_f32({1, 5, 1}, 9)), ints({37, 5, 300})}};
    expect_threaded_matches_reference("expand.strided", e, threads);
    // A ViT's patches: 14 rows of patches over 2 or 3 threads (uneven).
    OpCase p{.op_type = "Patches",
             .opset = 1,
             .attrs = attrs({{"kernel_shape", std::vector<int64_t>{16, 16}}}),
             .inputs = {in(random_f32({1, 3, 224, 224}, 10))},
             .domain = "kiln"};
    expect_threaded_matches_reference("patches.strided", p, threads);
  }
}

}  // namespace
}  // namespace kiln::testing
