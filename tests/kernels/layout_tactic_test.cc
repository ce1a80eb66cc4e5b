// The nChw16c layout's portable tactics against their references: the reorders both ways
// (channel counts with and without padding lanes, batches), the blocked global average pool and
// the blocked channel scale (a scale per image or one for all), the blocked max pool and the
// blocked resize, on 1 to 3 threads.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "kernels/ref/layout.h"
#include "kernels/tactic_test_util.h"
#include "kernels/x86_test_util.h"

namespace kiln::testing {
namespace {

using kernels::ref::padded_channels;

OpCase layout_case(const std::string& op, std::vector<OpInput> inputs, int64_t channels = 0) {
  OpCase c;
  c.op_type = op;
  c.domain = "kiln";
  c.opset = 1;
  c.inputs = std::move(inputs);
  if (channels > 0) c.attrs.set("channels", channels);
  return c;
}

// Planes small enough to run on one thread (5x7, 9x11) and large enough to split (45x47).
TEST(LayoutTactics, ReordersBothWays) {
  for (int64_t c : {1, 16, 17, 40}) {
    for (auto [h, w] : {std::pair<int64_t, int64_t>{5, 7}, {45, 47}}) {
      for (int threads : {1, 2, 3}) {
        const Dims plain{2, c, h, w};
        expect_matches_reference_prepacked("reorder.to_nchw16c",
                                           layout_case("ToNchw16c", {in(random_f32(plain, 1))}),
                                           kPointTol, threads);
        const Dims blocked{2, padded_channels(c), h, w};
        expect_matches_reference_prepacked(
            "reorder.from_nchw16c", layout_case("FromNchw16c", {in(random_f32(blocked, 2))}, c),
            kPointTol, threads);
      }
    }
  }
}

TEST(LayoutTactics, BlockedPoolAndChannelScale) {
  for (int64_t c : {5, 16, 40}) {
    for (auto [h, w] : {std::pair<int64_t, int64_t>{9, 11}, {45, 47}}) {
      const Dims x{2, padded_channels(c), h, w};
      for (int threads : {1, 2, 3}) {
        expect_matches_reference_prepacked(
            "pool.global_avg_nchw16c.f32",
            layout_case("GlobalAveragePoolNchw16c", {in(random_f32(x, 3))}, c), kSumTol, threads);
        for (int64_t scales : {1, 2}) {
          const Dims s{scales, padded_channels(c), 1, 1};
          expect_matches_reference_prepacked(
              "eltwise.mul_nchw16c.f32",
              layout_case("MulNchw16c", {in(random_f32(x, 4)), in(random_f32(s, 5))}, c), kPointTol,
              threads);
        }
      }
    }
  }
}

// kiln.MaxPoolNchw16c, the portable tactic and the x86 ones (both ISAs on an AVX-512 host):
// ResNet's 3x3 stride 2, YOLO's 5x5 stride 1, a 2x2 without padding, a dilated window, ceil_mode (a
// last window hanging past the input), auto_pad and asymmetric pads; channel tails and batches; 1
// to 3 threads.
TEST(LayoutTactics, BlockedMaxPool) {
  std::vector<std::string> tactics{"pool.max_nchw16c.f32"};
  for (const std::string& isa : x86_isas()) tactics.push_back("pool.max_nchw16c.f32." + isa);
  struct Window {
    Ints kernel, strides, pads, dilations;
    int64_t ceil_mode = 0;
    std::string auto_pad;
  };
  const Window windows[] = {
      {{3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}},    {{5, 5}, {1, 1}, {2, 2, 2, 2}, {1, 1}},
      {{2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}},    {{3, 3}, {1, 2}, {2, 1, 2, 0}, {2, 2}},
      {{3, 2}, {2, 2}, {0, 1, 1, 0}, {1, 1}, 1}, {{3, 3}, {2, 2}, {}, {1, 1}, 0, "SAME_UPPER"}};
  for (const Window& win : windows) {
    for (int64_t c : {5, 16, 40}) {
      for (int threads : {1, 2, 3}) {
        OpCase op =
            layout_case("MaxPoolNchw16c", {in(random_f32({2, padded_channels(c), 11, 14}, 6))}, c);
        op.attrs.set("kernel_shape", win.kernel);
        op.attrs.set("strides", win.strides);
        op.attrs.set("dilations", win.dilations);
        if (!win.pads.empty()) op.attrs.set("pads", win.pads);
        if (win.ceil_mode != 0) op.attrs.set("ceil_mode", win.ceil_mode);
        if (!win.auto_pad.empty()) op.attrs.set("auto_pad", win.auto_pad);
        SCOPED_TRACE(::testing::Message() << "k" << win.kernel[0] << "x" << win.kernel[1] << " c"
                                          << c << " threads " << threads);
        for (const std::string& tactic : tactics) {
          SCOPED_TRACE(tactic);
          expect_matches_reference_prepacked(tactic, op, kPointTol, threads);
        }
      }
    }
  }
}

// NaNs among the inputs (one in seven, first taps included) are skipped by every blocked max pool
// as by the reference, whatever order each walks its taps in.
TEST(LayoutTactics, BlockedMaxPoolSkipsNaN) {
  std::vector<std::string> tactics{"pool.max_nchw16c.f32"};
  for (const std::string& isa : x86_isas()) tactics.push_back("pool.max_nchw16c.f32." + isa);
  Tensor x = random_f32({1, padded_channels(20), 9, 10}, 8);
  for (int64_t i = 0; i < x.numel(); i += 7)
    x.data<float>()[i] = std::numeric_limits<float>::quiet_NaN();
  OpCase op = layout_case("MaxPoolNchw16c", {in(x)}, 20);
  op.attrs.set("kernel_shape", Ints{3, 3});
  op.attrs.set("strides", Ints{2, 2});
  op.attrs.set("pads", Ints{1, 1, 1, 1});
  op.attrs.set("dilations", Ints{1, 1});
  for (const std::string& tactic : tactics) {
    SCOPED_TRACE(tactic);
    expect_matches_reference_prepacked(tactic, op, kPointTol, 2);
  }
}

// kiln.ResizeNchw16c against its reference (the ONNX Resize of the unblocked lanes): YOLO's
// nearest 2x upsampling, bilinear by sizes and scales, 1 to 3 threads (rows split inside planes).
TEST(LayoutTactics, BlockedResize) {
  const auto floats = [](std::vector<float> v) {
    return Tensor::from_vector<float>({static_cast<int64_t>(v.size())}, v);
  };
  struct Case {
    const char* mode;
    const char* coord;
    Dims x;
    std::vector<float> scales;
    std::vector<int64_t> sizes;
  };
  const Case cases[] = {
      {"nearest", "asymmetric", {1, 32, 10, 10}, {1, 1, 2, 2}, {}},
      {"nearest", "half_pixel", {2, 16, 5, 7}, {1, 1, 3, 1.5f}, {}},
      {"linear", "half_pixel", {1, 48, 9, 11}, {}, {1, 48, 20, 33}},
      {"linear", "align_corners", {1, 16, 40, 41}, {1, 1, 0.5f, 2}, {}},
  };
  for (const Case& k : cases) {
    for (int threads : {1, 2, 3}) {
      OpCase op =
          layout_case("ResizeNchw16c", {in(random_f32(k.x, 5)), constant(floats({}))}, k.x[1] - 3);
      op.attrs.set("resize_version", int64_t{13});
      op.attrs.set("mode", std::string(k.mode));
      op.attrs.set("coordinate_transformation_mode", std::string(k.coord));
      if (k.sizes.empty()) {
        op.inputs.push_back(constant(floats(k.scales)));
      } else {
        op.inputs.push_back(constant(floats({})));
        op.inputs.push_back(constant(
            Tensor::from_vector<int64_t>({static_cast<int64_t>(k.sizes.size())}, k.sizes)));
      }
      SCOPED_TRACE(std::string(k.mode) + " " + k.coord + " threads " + std::to_string(threads));
      expect_matches_reference_prepacked("resize.separable_nchw16c.f32", op, kPointTol, threads);
    }
  }
}

TEST(LayoutTactics, AScaleOfAnotherShapeIsAnError) {
  expect_error(
      layout_case("MulNchw16c",
                  {in(random_f32({1, 16, 3, 3}, 1)), in(random_f32({1, 16, 3, 1}, 2))}, 16),
      StatusCode::kInvalidModel, "must be [1 or N, C, 1, 1]");
}

}  // namespace
}  // namespace kiln::testing
