// The oneDNN tactics (onednn.*.f32) against the reference kernels, through the same harness as the
// builtin tactics: outputs pre-poisoned with NaN, a second run() under the allocation counter.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>

#include "base/cpu_features.h"
#include "kernels/conv_cases.h"
#include "kernels/tactic_test_util.h"
#include "parallel/thread_pool.h"
#include "tactics/onednn/onednn_common.h"
#include "tactics/tactic.h"

namespace kiln::testing {
namespace onednn_tactic_test {

constexpr const char* kConv = "onednn.conv.f32";
constexpr const char* kFusedConv = "onednn.fused_conv.f32";
constexpr const char* kWinograd = "onednn.conv_winograd.f32";
constexpr const char* kFusedWinograd = "onednn.fused_conv_winograd.f32";
constexpr const char* kWinogradSlices = "onednn.conv_winograd_slices.f32";
constexpr const char* kFusedWinogradSlices = "onednn.fused_conv_winograd_slices.f32";
constexpr const char* kBlocked = "onednn.conv_nchw16c.f32";
constexpr const char* kBlockedWinograd = "onednn.conv_nchw16c_winograd.f32";
constexpr const char* kMatMul = "onednn.matmul.f32";
constexpr const char* kGemm = "onednn.gemm.f32";
constexpr const char* kFusedGemm = "onednn.fused_gemm.f32";

// Winograd sums transformed tiles: F(4x4,3x3)'s transforms have entries up to 8 and rounding grows
// with them, about 10x a direct convolution's (still 1e-5 of the output's scale at these sizes).
constexpr Tolerance kWinogradTol{1e-4, 1e-4};

// oneDNN 2.6 implements Winograd for AVX-512 only (the tactics require it, and the builder skips
// them elsewhere): on an AVX2 host the primitive cannot be created, so the runs are skipped.
constexpr const char* kWinogradNeedsAvx512 = "no AVX-512: oneDNN 2.6 has no Winograd below it";

bool host_has_avx512() { return (host_cpu_features() & kIsaAvx512) == kIsaAvx512; }

// Post-ops use oneDNN's vectorized exp/erf/tanh approximations.
constexpr Tolerance kActTol{1e-4, 1e-5};

// oneDNN 2.6's execute() heap-allocates on every call: its argument maps, and in the gemm-based
// convolution one std::function per work item, so the count grows with the layer (a 64->64 3x3
// conv: 8 allocations at 6x6, 105 at 112x112). The tactics say so through allocates(); these
// tests do not bound the count.
constexpr int64_t kExecuteAllocations = std::numeric_limits<int64_t>::max();

void expect_matches(const std::string& tactic, const OpCase& c, Tolerance tol) {
  expect_matches_reference(tactic, c, tol, kExecuteAllocations);
}

// Channels: 1, 3, 7, 17 and tails of 16-channel blocks, grouped and depthwise (with a multiplier).
const ConvGeom kChannelCases[] = {
    {.cin = 1, .cout = 1},
    {.cin = 3, .cout = 7},
    {.cin = 7, .cout = 17},
    {.cin = 17, .cout = 3},
    {.cin = 33, .cout = 35},
    {.cin = 6, .cout = 9, .group = 3},
    {.cin = 32, .cout = 32, .group = 2},
    {.cin = 7, .cout = 7, .group = 7},
    {.cin = 17, .cout = 17, .group = 17},
    {.cin = 16, .cout = 16, .group = 16},
    {.cin = 3, .cout = 6, .group = 3},
};

TEST(OnednnConvTactic, MatchesReferenceOverChannelsKernelsStridesPadsDilations) {
  for (const ConvGeom& g : channel_sweep(kChannelCases, {1, 3}, conv_fits)) {
    expect_matches(kConv, conv_case(g), kSumTol);
  }
}

TEST(OnednnConvTactic, RectangularKernelsLargePadsBatchesAndStem) {
  ConvGeom g{.batch = 3, .cin = 4, .cout = 6, .h = 7, .w = 9, .kh = 2, .kw = 5};
  g.pad = 2;
  expect_matches(kConv, conv_case(g), kSumTol);
  g = ConvGeom{
      .batch = 2, .cin = 3, .cout = 64, .h = 23, .w = 20, .kh = 7, .kw = 7, .stride = 2, .pad = 3};
  expect_matches(kConv, conv_case(g), kSumTol);
  g = ConvGeom{.cin = 64, .cout = 64, .h = 14, .w = 14, .pad = 1};
  expect_matches(kConv, conv_case(g), kSumTol);
  g = ConvGeom{.batch = 2, .cin = 256, .cout = 64, .h = 7, .w = 9, .kh = 1, .kw = 1};
  expect_matches(kConv, conv_case(g), kSumTol);
}

TEST(OnednnConvTactic, WithoutBiasAndWithRuntimeWeights) {
  const ConvGeom g{.batch = 2, .cin = 5, .cout = 7, .h = 6, .w = 9, .pad = 1};
  expect_matches(kConv, conv_case(g, /*bias=*/false), kSumTol);
  expect_matches(kConv, conv_case(g, /*bias=*/true, /*const_w=*/false), kSumTol);
  const ConvGeom dw{.cin = 8, .cout = 8, .group = 8, .h = 6, .w = 9, .pad = 1};
  expect_matches(kConv, conv_case(dw, true, false), kSumTol);
}

TEST(OnednnConvTactic, AutoPadAsymmetricPadsAndUnusedEndRows) {
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    for (int64_t stride : {1, 2}) {
      OpCase c;
      c.op_type = "Conv";
      c.attrs = attrs({{"auto_pad", std::string(mode)}, {"strides", Ints{stride, stride}}});
      c.inputs = {in(random_f32({1, 3, 8, 7}, 3)), constant(random_f32({4, 3, 3, 2}, 4))};
      expect_matches(kConv, c, kSumTol);
    }
  }
  OpCase c;
  c.op_type = "Conv";
  c.attrs = attrs({{"pads", Ints{0, 2, 1, 0}}, {"strides", Ints{1, 2}}});
  c.inputs = {in(random_f32({1, 3, 6, 9}, 5)), constant(random_f32({2, 3, 3, 3}, 6)),
              constant(random_f32({2}, 7))};
  expect_matches(kConv, c, kSumTol);
  // 6 rows, kernel 3, stride 2, no pad: the last row is never read (a negative end pad).
  c.attrs = attrs({{"strides", Ints{2, 2}}});
  c.inputs = {in(random_f32({1, 3, 6, 6}, 5)), constant(random_f32({2, 3, 3, 3}, 6))};
  expect_matches(kConv, c, kSumTol);
}

TEST(OnednnConvTactic, OneAndThreeDimensionalConvolution) {
  for (int64_t stride : {1, 2}) {
    OpCase c;
    c.op_type = "Conv";
    c.attrs = attrs({{"pads", Ints{1, 2}}, {"strides", Ints{stride}}, {"dilations", Ints{2}}});
    c.inputs = {in(random_f32({2, 5, 17}, 1)), constant(random_f32({3, 5, 3}, 2)),
                constant(random_f32({3}, 3))};
    expect_matches(kConv, c, kSumTol);
  }
  OpCase c;
  c.op_type = "Conv";
  c.attrs = attrs({{"pads", Ints{1, 1, 1, 1, 1, 1}}});
  c.inputs = {in(random_f32({1, 3, 4, 5, 6}, 1)), constant(random_f32({5, 3, 3, 3, 3}, 2))};
  expect_matches(kConv, c, kSumTol);
}

TEST(OnednnConvTactic, RefusesOtherDtypesAndRanks) {
  OpCase c;
  c.op_type = "Conv";
  c.inputs = {in(Tensor(DType::kF16, {1, 1, 4, 4})), constant(Tensor(DType::kF16, {1, 1, 3, 3}))};
  expect_rejected(kConv, c, "float32");
}

TEST(OnednnFusedConvTactic, EveryActivationWithAndWithoutResidual) {
  for (const ActCase& act : fused_activations()) {
    for (bool residual : {false, true}) {
      SCOPED_TRACE(act.name + (residual ? " + residual" : ""));
      const ConvGeom g{.batch = 2, .cin = 7, .cout = 17, .h = 6, .w = 9, .pad = 1};
      expect_matches(kFusedConv, fused_conv_case(g, true, residual, act.name, act.params), kActTol);
      const ConvGeom pw{.cin = 32, .cout = 16, .h = 5, .w = 5, .kh = 1, .kw = 1};
      expect_matches(kFusedConv, fused_conv_case(pw, true, residual, act.name, act.params),
                     kActTol);
    }
  }
}

TEST(OnednnFusedConvTactic, DepthwiseStridedWithResidualAndRelu6) {
  const ConvGeom g{.cin = 17, .cout = 17, .group = 17, .h = 9, .w = 8, .stride = 2, .pad = 1};
  expect_matches(kFusedConv, fused_conv_case(g, true, true, "Clip", {0.0f, 6.0f}), kActTol);
}

// Winograd: channel tails of oneDNN's 16-channel blocks, odd and even extents (partial 4x4 output
// tiles), pads 0 and 1, batches, with and without bias.
TEST(OnednnWinogradTactic, MatchesReferenceOverChannelsExtentsAndPads) {
  if (!host_has_avx512()) GTEST_SKIP() << kWinogradNeedsAvx512;
  const ConvGeom shapes[] = {
      {.cin = 1, .cout = 1, .h = 4, .w = 4, .pad = 1},
      {.cin = 3, .cout = 7, .h = 5, .w = 7},
      {.cin = 16, .cout = 16, .h = 8, .w = 8, .pad = 1},
      {.cin = 17, .cout = 33, .h = 13, .w = 9, .pad = 1},
      {.batch = 2, .cin = 64, .cout = 64, .h = 14, .w = 14, .pad = 1},
      {.cin = 35, .cout = 18, .h = 7, .w = 11, .pad = 1},
  };
  for (const ConvGeom& g : shapes) {
    for (bool bias : {true, false}) expect_matches(kWinograd, conv_case(g, bias), kWinogradTol);
  }
}

TEST(OnednnWinogradTactic, FusedReluAndResidual) {
  const ConvGeom clip{.cin = 8, .cout = 8, .h = 6, .w = 6, .pad = 1};
  expect_rejected(kFusedWinograd, fused_conv_case(clip, true, false, "Clip", {0.0f, 6.0f}),
                  "ReLU only, not Clip");
  if (!host_has_avx512()) GTEST_SKIP() << kWinogradNeedsAvx512;
  for (const char* act : {"", "Relu"}) {
    for (bool residual : {false, true}) {
      SCOPED_TRACE(std::string(act) + (residual ? " + residual" : ""));
      const ConvGeom g{.batch = 2, .cin = 24, .cout = 40, .h = 10, .w = 9, .pad = 1};
      expect_matches(kFusedWinograd, fused_conv_case(g, true, residual, act), kWinogradTol);
    }
  }
}

// kiln.ConvNchw16c on oneDNN's nChw16c primitives: dense kernels, strides, pads, a 7x7 window,
// batches, residual (copied to Y, or in place) and activations; Winograd with ReLU and residual;
// refusals of channel counts with padding lanes and of the AVX-512-less host.
TEST(OnednnBlockedConvTactic, DirectAndWinogradMatchTheReference) {
  if (!host_has_avx512()) GTEST_SKIP() << "no AVX-512";
  const ConvGeom direct[] = {
      {.batch = 2, .cin = 16, .cout = 32, .h = 9, .w = 11, .pad = 1},
      {.cin = 32, .cout = 16, .h = 14, .w = 14, .stride = 2, .pad = 1},
      {.cin = 16, .cout = 16, .h = 12, .w = 10, .kh = 7, .kw = 7, .stride = 2, .pad = 3},
      {.cin = 64, .cout = 48, .h = 7, .w = 7, .kh = 1, .kw = 1, .stride = 2},
      {.cin = 16, .cout = 16, .h = 9, .w = 9, .pad = 2, .dil = 2},
  };
  for (const ConvGeom& g : direct) {
    for (const ActCase& act : {ActCase{}, ActCase{"Relu", {}}, ActCase{"Silu", {}}}) {
      for (bool residual : {false, true}) {
        SCOPED_TRACE(case_text(nchw16c_case(g, true, residual, act)));
        expect_matches(kBlocked, nchw16c_case(g, true, residual, act), kActTol);
      }
    }
    expect_matches(kBlocked, nchw16c_case(g, false), kActTol);
  }
  const ConvGeom wino{.batch = 2, .cin = 32, .cout = 48, .h = 10, .w = 9, .pad = 1};
  for (const ActCase& act : {ActCase{}, ActCase{"Relu", {}}}) {
    for (bool residual : {false, true}) {
      expect_matches(kBlockedWinograd, nchw16c_case(wino, true, residual, act), kWinogradTol);
    }
  }
  expect_rejected(kBlockedWinograd, nchw16c_case(wino, true, false, {"Clip", {0.0f, 6.0f}}),
                  "ReLU only, not Clip");
  expect_rejected(kBlocked, nchw16c_case({.cin = 24, .cout = 32, .h = 5, .w = 5}),
                  "24 -> 32 channels: only whole 16-channel blocks");
  expect_rejected(kBlocked, nchw16c_case({.cin = 16, .cout = 20, .h = 5, .w = 5}),
                  "16 -> 20 channels");
  const ConvGeom pw{.cin = 16, .cout = 32, .h = 5, .w = 5, .kh = 1, .kw = 1};
  expect_rejected(kBlocked, with_channel_scale(nchw16c_case(pw), pw, false),
                  "no channel scale on X");
}

// A first layer: X NCHW with 3 channels (x_layout "nchw"), Y blocked; a stem's stride and ReLU6.
TEST(OnednnBlockedConvTactic, AnNchwInputOfFewChannels) {
  if (!host_has_avx512()) GTEST_SKIP() << "no AVX-512";
  const ConvGeom g{.batch = 2, .cin = 3, .cout = 32, .h = 15, .w = 12, .stride = 2, .pad = 1};
  OpCase c = plain_x_nchw16c_case(g, true, false, {"Clip", {0.0f, 6.0f}});
  expect_matches(kBlocked, c, kActTol);
  expect_rejected(kBlockedWinograd, c, "strides");
  c.attrs.set("strides", Ints{1, 1});
  expect_rejected(kBlockedWinograd, c, "Winograd needs a blocked X");
}

// The tactic run on a pool of `threads` (none for 1) matches the reference.
void expect_matches_on_pool(const std::string& tactic, const OpCase& c, int threads) {
  SCOPED_TRACE(tactic + " on " + std::to_string(threads) + " thread(s), " + case_text(c));
  auto og = build_op_graph(c);
  ASSERT_TRUE(og.is_ok()) << og.status().to_string();
  const tactics::LayerSpec spec = layer_spec(og->graph);
  ASSERT_EQ(tactics::find_tactic(tactic)->why_not(spec), "");
  auto kernel = tactics::find_tactic(tactic)->instantiate(spec);
  ASSERT_TRUE(kernel.is_ok()) << kernel.status().to_string();
  std::unique_ptr<parallel::ThreadPool> pool;
  if (threads > 1) pool = std::make_unique<parallel::ThreadPool>(threads);
  (*kernel)->set_thread_pool(pool.get());
  auto got = run_layer_kernel(**kernel, *og);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  auto want = run_op(c);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  EXPECT_EQ(compare_tensors(got->outputs[0], (*want)[0], kWinogradTol), "");
}

// Slices of whole 16-channel blocks, one per pool thread: fewer blocks than threads (17 and 33
// output channels on 3 threads: slices of 16 and 1, 16, 16 and 1), batches (each slice's
// channels of a batch-2 output are a strided view), residual and ReLU; one thread runs unsliced.
TEST(OnednnWinogradTactic, SlicesMatchTheReferenceOnPoolsOfOneToThreeThreads) {
  expect_rejected(kWinogradSlices, conv_case({.cin = 4, .cout = 4, .stride = 2, .pad = 1}),
                  "strides");
  if (!host_has_avx512()) GTEST_SKIP() << kWinogradNeedsAvx512;
  const ConvGeom shapes[] = {
      {.cin = 5, .cout = 17, .h = 9, .w = 7, .pad = 1},
      {.batch = 2, .cin = 24, .cout = 33, .h = 10, .w = 9, .pad = 1},
      {.cin = 32, .cout = 64, .h = 14, .w = 14},
  };
  for (int threads : {1, 2, 3}) {
    for (const ConvGeom& g : shapes) {
      expect_matches_on_pool(kWinogradSlices, conv_case(g, true), threads);
      expect_matches_on_pool(kWinogradSlices, conv_case(g, false), threads);
      expect_matches_on_pool(kFusedWinogradSlices, fused_conv_case(g, true, true, "Relu"), threads);
    }
  }
}

TEST(OnednnWinogradTactic, SaysWhichLayersItCannotTake) {
  expect_rejected(kWinograd, conv_case({.cin = 4, .cout = 4, .stride = 2, .pad = 1}), "strides");
  expect_rejected(kWinograd, conv_case({.cin = 4, .cout = 4, .h = 9, .dil = 2}), "dilations");
  expect_rejected(kWinograd, conv_case({.cin = 4, .cout = 4, .h = 9, .w = 9, .kh = 5, .kw = 5}),
                  "3x3");
  expect_rejected(kWinograd, conv_case({.cin = 4, .cout = 4, .group = 2}), "ungrouped");
  expect_rejected(kWinograd, conv_case({.cin = 4, .cout = 4}, true, /*const_w=*/false),
                  "constant weights");
  OpCase c;
  c.op_type = "Conv";
  c.inputs = {in(random_f32({1, 2, 9}, 1)), constant(random_f32({2, 2, 3}, 2))};
  expect_rejected(kWinograd, c, "2-D 3x3");
}

// --- MatMul / Gemm / FusedGemm -------------------------------------------------------------------

OpCase matmul_case(const Dims& a, const Dims& b, bool const_b) {
  OpCase c;
  c.op_type = "MatMul";
  c.inputs = {in(random_f32(a, 1)), const_b ? constant(random_f32(b, 2)) : in(random_f32(b, 2))};
  return c;
}

TEST(OnednnMatMulTactic, MatchesReferenceOverShapesAndBroadcasts) {
  const std::pair<Dims, Dims> cases[] = {
      {{1, 1}, {1, 1}},
      {{3, 7}, {7, 17}},
      {{17, 33}, {33, 5}},
      {{2, 5, 7}, {7, 3}},
      {{2, 5, 7}, {2, 7, 3}},
      {{2, 1, 5, 7}, {3, 7, 4}},
      {{7}, {7, 5}},
      {{4, 7}, {7}},
      {{7}, {7}},
      {{2, 3, 5, 16}, {16, 33}},
      {{1, 4, 8}, {3, 8, 2}},
  };
  for (const auto& [a, b] : cases) {
    for (bool const_b : {true, false}) {
      expect_matches(kMatMul, matmul_case(a, b, const_b), kSumTol);
    }
  }
}

OpCase gemm_case(int64_t m, int64_t k, int64_t n, bool ta, bool tb, float alpha, float beta,
                 const Dims& c_dims, bool const_b = true, bool const_c = true) {
  OpCase c;
  c.op_type = "Gemm";
  c.attrs =
      attrs({{"transA", int64_t{ta}}, {"transB", int64_t{tb}}, {"alpha", alpha}, {"beta", beta}});
  Tensor b = random_f32(tb ? Dims{n, k} : Dims{k, n}, 2);
  c.inputs = {in(random_f32(ta ? Dims{k, m} : Dims{m, k}, 1)), const_b ? constant(b) : in(b)};
  if (!c_dims.empty() || const_c) {
    if (c_dims != Dims{-1}) {
      Tensor cv = random_f32(c_dims, 3);
      c.inputs.push_back(const_c ? constant(cv) : in(cv));
    }
  }
  return c;
}

TEST(OnednnGemmTactic, TransposesAlphaBetaAndCBroadcasts) {
  const Dims c_shapes[] = {{-1}, {}, {1}, {17}, {1, 17}, {5, 1}, {5, 17}};
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (const Dims& cd : c_shapes) {
        for (auto [alpha, beta] : {std::pair{1.0f, 1.0f}, std::pair{0.5f, 2.0f}}) {
          expect_matches(kGemm, gemm_case(5, 7, 17, ta, tb, alpha, beta, cd), kSumTol);
        }
      }
      expect_matches(kGemm, gemm_case(5, 7, 17, ta, tb, 1.5f, 1.5f, {17}, false, false), kSumTol);
    }
  }
}

TEST(OnednnGemmTactic, RefusesNonConstantCWithBeta) {
  expect_rejected(kGemm, gemm_case(5, 7, 17, false, false, 1.0f, 0.5f, {17}, true, false), "beta");
}

TEST(OnednnFusedGemmTactic, ActivationsAndBatchedA) {
  for (const ActCase& act : fused_activations()) {
    SCOPED_TRACE(act.name);
    OpCase c = gemm_case(6, 33, 17, false, true, 1.0f, 1.0f, {17});
    c.op_type = "FusedGemm";
    c.domain = "kiln";
    c.opset = 1;
    if (!act.name.empty()) c.attrs.set("activation", act.name);
    if (!act.params.empty()) c.attrs.set("activation_params", act.params);
    expect_matches(kFusedGemm, c, kActTol);
    c.inputs[0] = in(random_f32({2, 3, 33}, 4));  // batched A, C broadcast to [1, N]
    expect_matches(kFusedGemm, c, kActTol);
  }
}

// Input 0's desc with its leading dim (the batch) unknown, as a dynamic-batch engine declares it.
ir::TensorDesc batch_unknown(ir::TensorDesc d) {
  (*d.shape)[0] = ir::Dim::named("n");
  return d;
}

// Runs `tactic` on c with the weights it packed for the engine (prepack()), or with `stored` in
// their place, against the reference; with dynamic_batch, built as for an engine whose batch is
// dynamic (packed for a batch of 1, run on c's).
void expect_prepacked_matches(const std::string& name, const OpCase& c, Tolerance tol,
                              const Tensor* stored = nullptr, bool dynamic_batch = false) {
  SCOPED_TRACE(name + " prepacked" + (dynamic_batch ? " for a dynamic batch" : "") + ", on " +
               case_text(c));
  auto og = build_op_graph(c);
  ASSERT_TRUE(og.is_ok()) << og.status().to_string();
  const tactics::Tactic* tactic = tactics::find_tactic(name);
  ASSERT_NE(tactic, nullptr);
  tactics::LayerSpec spec = layer_spec(og->graph);
  if (dynamic_batch) spec.inputs[0] = batch_unknown(spec.inputs[0]);
  auto packed = tactic->prepack(spec);
  ASSERT_TRUE(packed.is_ok()) << packed.status().to_string();
  ASSERT_TRUE(packed->defined()) << "static shapes and constant weights: packed for the engine";
  spec.prepacked = stored != nullptr ? stored : &*packed;
  auto kernel = tactic->instantiate(spec);
  ASSERT_TRUE(kernel.is_ok()) << kernel.status().to_string();
  auto got = run_layer_kernel(**kernel, *og);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  auto want = run_op(c);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  EXPECT_EQ(compare_tensors(got->outputs[0], (*want)[0], tol), "");
}

// The direct convolutions and the GEMMs pack constant weights when the engine is built (for a
// batch of 1 when the batch is dynamic): their kernels run on that copy alone. The Winograd ones
// (a layout that can change with the thread count) and other dynamic dims leave the packing to
// each context.
TEST(OnednnTactics, PackWeightsForTheEngineAndRunOnThem) {
  const ConvGeom g{.batch = 2, .cin = 17, .cout = 33, .h = 9, .w = 8, .pad = 1};
  expect_prepacked_matches(kConv, conv_case(g), kSumTol);
  expect_prepacked_matches(kConv, conv_case(g), kSumTol, nullptr, /*dynamic_batch=*/true);
  expect_prepacked_matches(kGemm, gemm_case(5, 7, 17, false, true, 1.0f, 1.0f, {17}), kSumTol,
                           nullptr, /*dynamic_batch=*/true);
  expect_prepacked_matches(kConv, conv_case({.cin = 8, .cout = 8, .group = 4, .h = 6, .w = 6}),
                           kSumTol);
  expect_prepacked_matches(kGemm, gemm_case(5, 7, 17, false, true, 0.5f, 2.0f, {17}), kSumTol);
  expect_prepacked_matches(kMatMul, matmul_case({2, 5, 7}, {7, 3}, true), kSumTol);
  if (host_has_avx512()) {
    const ConvGeom b{.cin = 16, .cout = 32, .h = 9, .w = 11, .pad = 1};
    expect_prepacked_matches(kBlocked, nchw16c_case(b, true, true, {"Relu", {}}), kActTol);
    for (const char* wino : {kWinograd, kBlockedWinograd}) {
      const OpCase w = std::string(wino) == kWinograd ? conv_case(b) : nchw16c_case(b);
      auto og = build_op_graph(w);
      ASSERT_TRUE(og.is_ok());
      auto packed = tactics::find_tactic(wino)->prepack(layer_spec(og->graph));
      ASSERT_TRUE(packed.is_ok());
      EXPECT_FALSE(packed->defined()) << wino;
    }
  }
  OpCase dynamic = conv_case(g);
  auto og = build_op_graph(dynamic);
  ASSERT_TRUE(og.is_ok());
  tactics::LayerSpec spec = layer_spec(og->graph);
  spec.inputs[0] = ir::TensorDesc::of(
      DType::kF32, {ir::Dim::known(2), ir::Dim::known(17), ir::Dim::named("h"), ir::Dim::known(8)});
  auto packed = tactics::find_tactic(kConv)->prepack(spec);
  ASSERT_TRUE(packed.is_ok());
  EXPECT_FALSE(packed->defined()) << "a dynamic height";
}

// Stored weights in another layout than the primitive asks for (channels last here) are reordered
// into it; bytes that are not packed weights of this oneDNN are refused, naming the layer.
TEST(OnednnTactics, ReorderStoredWeightsOfAnotherLayoutAndRefuseForeignOnes) {
  const ConvGeom g{.cin = 16, .cout = 32, .h = 7, .w = 7, .pad = 1};
  const OpCase c = conv_case(g);
  const Tensor& w = *c.inputs[1].tensor;
  const auto desc = [](dnnl::memory::format_tag tag) {
    return dnnl::memory::desc({32, 16, 3, 3}, dnnl::memory::data_type::f32, tag);
  };
  auto stored = tactics::onednn::stored_weights(w.raw_data(), desc(dnnl::memory::format_tag::oihw),
                                                desc(dnnl::memory::format_tag::ohwi));
  ASSERT_TRUE(stored.is_ok()) << stored.status().to_string();
  ASSERT_TRUE(stored->defined());
  expect_prepacked_matches(kConv, c, kSumTol, &*stored);

  auto og = build_op_graph(c);
  ASSERT_TRUE(og.is_ok());
  const auto refused = [&](const Tensor& bad) {
    tactics::LayerSpec spec = layer_spec(og->graph);
    spec.prepacked = &bad;
    auto kernel = tactics::find_tactic(kConv)->instantiate(spec);
    return kernel.is_ok() ? std::string("accepted") : kernel.status().message();
  };
  Tensor no_magic = stored->clone();
  static_cast<char*>(no_magic.raw_data())[0] = 'x';
  EXPECT_NE(refused(no_magic).find("have no header"), std::string::npos) << refused(no_magic);
  Tensor other_version = stored->clone();
  static_cast<uint32_t*>(other_version.raw_data())[2] += 1;  // the major version
  EXPECT_NE(refused(other_version).find("rebuild the engine"), std::string::npos)
      << refused(other_version);
  const Tensor cut(DType::kU8, {100});
  EXPECT_NE(refused(cut).find("node '"), std::string::npos) << refused(cut);
}

// Winograd comes after the direct convolution: untimed builds take the first applicable tactic.
TEST(OnednnTactics, AreRegisteredAfterTheBuiltinOnesWithTheirSource) {
  const std::pair<const char*, size_t> names[] = {
      {kConv, 4},          {kFusedConv, 4},      {kMatMul, 2},
      {kGemm, 2},          {kFusedGemm, 2},      {kWinograd, 3},
      {kFusedWinograd, 3}, {kWinogradSlices, 2}, {kFusedWinogradSlices, 2}};
  for (const auto& [name, from_end] : names) {
    const tactics::Tactic* t = tactics::find_tactic(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->source(), "onednn");
    const std::vector<const tactics::Tactic*> order =
        tactics::tactics_for(t->domain(), t->op_type());
    ASSERT_GE(order.size(), 3u);
    EXPECT_EQ(order[0]->source(), "kiln") << name;
    EXPECT_EQ(order[order.size() - from_end], t) << name;  // ref.generic is last
  }
  EXPECT_EQ(tactics::find_tactic("ref.generic")->source(), "ref");
  EXPECT_EQ(tactics::find_tactic("conv.direct.f32")->source(), "kiln");
}

TEST(OnednnTactics, SayTheyAllocateWhileRunning) {
  // The claim allocates() makes is true: a large layer's run() allocates.
  const ConvGeom large{.batch = 2, .cin = 64, .cout = 64, .h = 56, .w = 56, .pad = 1};
  auto b = run_tactic(kConv, conv_case(large));
  ASSERT_TRUE(b.is_ok()) << b.status().to_string();
  EXPECT_GT(b->run_allocations, 0);
  for (const char* name :
       {kConv, kFusedConv, kMatMul, kGemm, kFusedGemm, kWinograd, kWinogradSlices}) {
    EXPECT_TRUE(tactics::find_tactic(name)->allocates()) << name;
  }
}

// The threads this process has (Linux).
int thread_count() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

// Runs a convolution big enough to be split on a kernel given a pool of `threads` (none for 1), and
// exits with the process's thread count: oneDNN's OpenMP threads are created on first use and
// stay, so a fresh process shows how many it ever used.
[[noreturn]] void run_conv_and_exit_with_thread_count(int threads) {
  auto og =
      build_op_graph(conv_case({.batch = 2, .cin = 32, .cout = 32, .h = 28, .w = 28, .pad = 1}));
  if (!og.is_ok()) std::exit(100);
  auto kernel = tactics::find_tactic(kConv)->instantiate(layer_spec(og->graph));
  if (!kernel.is_ok()) std::exit(101);
  std::unique_ptr<parallel::ThreadPool> pool;
  if (threads > 1) pool = std::make_unique<parallel::ThreadPool>(threads);
  (*kernel)->set_thread_pool(pool.get());
  if (!run_layer_kernel(**kernel, *og).is_ok()) std::exit(102);
  std::exit(thread_count());
}

TEST(OnednnTactics, OneThreadContextUsesOneThreadAndTwoUseTwo) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process: no OpenMP threads yet
  EXPECT_EXIT(run_conv_and_exit_with_thread_count(1), ::testing::ExitedWithCode(1), "");
  // The openmp pool is libgomp's team, so oneDNN's layer runs on the pool's threads: the caller
  // and one worker. Kiln's own workers (the threads backend) add one, asleep during the layer.
  const int threads = parallel::ThreadPool::backend() == "openmp" ? 2 : 3;
  EXPECT_EXIT(run_conv_and_exit_with_thread_count(2), ::testing::ExitedWithCode(threads), "");
}

}  // namespace onednn_tactic_test
}  // namespace kiln::testing
