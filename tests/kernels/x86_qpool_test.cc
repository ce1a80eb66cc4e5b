// pool.max.u8.avx512 (kernels/x86/qkernels.h's uint8 max pooling) against the reference, exactly:
// widths across the 64-byte vectors and their tails, strides 1 and 2 (the kernel's) and 3 (the
// portable fallback), windows, pads, dilations, ceil mode, rows too wide for the row buffer, and
// rows split over threads.
#include <gtest/gtest.h>

#include "kernels/x86_test_util.h"
#include "ops/nhwc.h"

namespace kiln::testing {
namespace {

constexpr const char* kTactic = "pool.max.u8.avx512";

Tensor u8_input(const Dims& x) {
  Tensor t(DType::kU8, x);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<uint8_t>()[i] = static_cast<uint8_t>(i * 37 % 256);
  return t;
}

OpCase max_pool(const Dims& x, int64_t k, int64_t stride, int64_t pad, int64_t dil, int64_t ceil) {
  const size_t spatial = x.size() - 2;
  OpCase c{.op_type = "MaxPool",
           .attrs = attrs({{"kernel_shape", Ints(spatial, k)},
                           {"strides", Ints(spatial, stride)},
                           {"pads", Ints(2 * spatial, pad)}})};
  if (dil != 1) c.attrs.set("dilations", Ints(spatial, dil));
  if (ceil != 0) c.attrs.set("ceil_mode", ceil);
  c.inputs.push_back(in(u8_input(x)));
  return c;
}

TEST(X86QMaxPool, MatchesReferenceExactlyOverWindowsAndWidths) {
  KILN_REQUIRE_VNNI();
  for (int64_t w : {1, 5, 63, 64, 65, 112, 130}) {
    for (int64_t k : {1, 2, 3, 5}) {
      for (int64_t stride : {1, 2, 3}) {
        for (int64_t pad : {0, 1, 2}) {
          for (int64_t dil : {1, 2}) {
            const int64_t extent = (k - 1) * dil + 1;
            if (pad >= extent || w + 2 * pad < extent || 6 + 2 * pad < extent) continue;
            expect_matches_reference(kTactic, max_pool({2, 3, 6, w}, k, stride, pad, dil, w % 2),
                                     Tolerance{0, 0});
          }
        }
      }
    }
  }
  // 1-D, and rows wider than the 4 KiB row buffer (the portable kernel).
  expect_matches_reference(kTactic, max_pool({2, 3, 77}, 3, 2, 1, 1, 0), Tolerance{0, 0});
  expect_matches_reference(kTactic, max_pool({1, 2, 5, 5000}, 3, 2, 1, 1, 0), Tolerance{0, 0});
}

TEST(X86QMaxPool, SplitsRowsOverThreadsAndRejectsFloat) {
  KILN_REQUIRE_VNNI();
  for (int threads : {2, 3}) {
    // 47 planes of 56 rows, cut mid-plane.
    expect_matches_reference_prepacked(kTactic, max_pool({1, 47, 112, 112}, 3, 2, 1, 1, 0),
                                       Tolerance{0, 0}, threads);
  }
  OpCase f = max_pool({1, 2, 5, 5}, 3, 1, 0, 1, 0);
  f.inputs[0] = in(random_f32({1, 2, 5, 5}, 3));
  expect_rejected(kTactic, f, "takes uint8, not float32");
}

// --- kiln.MaxPoolNhwc and pool.max_nhwc.u8.avx512
// -------------------------------------------------

constexpr const char* kNhwcTactic = "pool.max_nhwc.u8.avx512";

// max_pool's case on the same NCHW values, as kiln.MaxPoolNhwc of their NHWC transpose.
OpCase nhwc_pool(const OpCase& nchw) {
  OpCase c = nchw;
  c.op_type = "MaxPoolNhwc";
  c.domain = "kiln";
  c.opset = 1;
  c.inputs[0].tensor = ops::permuted(*nchw.inputs[0].tensor, ops::kNchwToNhwc);
  return c;
}

TEST(MaxPoolNhwcOp, IsMaxPoolOnTransposedTensors) {
  const OpCase nchw = max_pool({2, 5, 9, 8}, 3, 2, 1, 1, 1);
  auto want = run_op(nchw);
  auto got = run_op(nhwc_pool(nchw));
  ASSERT_TRUE(want.is_ok() && got.is_ok()) << got.status().to_string();
  EXPECT_EQ(
      compare_tensors((*got)[0], ops::permuted((*want)[0], ops::kNchwToNhwc), Tolerance{0, 0}), "");
  OpCase f = nhwc_pool(nchw);
  f.inputs[0] = in(random_f32({2, 9, 8, 5}, 3));
  expect_error(f, StatusCode::kUnsupported, "must be uint8");
}

TEST(X86QMaxPoolNhwc, MatchesReferenceExactlyOverChannelsAndWindows) {
  KILN_REQUIRE_VNNI();
  for (int64_t c : {1, 3, 63, 64, 65, 130}) {
    for (int64_t k : {1, 2, 3}) {
      for (int64_t stride : {1, 2, 3}) {
        for (int64_t pad : {0, 1}) {
          for (int64_t dil : {1, 2}) {
            if (pad >= (k - 1) * dil + 1) continue;
            const OpCase nchw = max_pool({2, c, 7, 6}, k, stride, pad, dil, stride % 2);
            expect_matches_reference(kNhwcTactic, nhwc_pool(nchw), Tolerance{0, 0});
          }
        }
      }
    }
  }
}

TEST(X86QMaxPoolNhwc, SplitsImageRowsOverThreads) {
  KILN_REQUIRE_VNNI();
  for (int threads : {2, 3}) {
    // ResNet-50's stem pooling on two images: 112 output rows, cut mid-image.
    expect_matches_reference_prepacked(kNhwcTactic,
                                       nhwc_pool(max_pool({2, 64, 112, 112}, 3, 2, 1, 1, 0)),
                                       Tolerance{0, 0}, threads);
  }
}

}  // namespace
}  // namespace kiln::testing
