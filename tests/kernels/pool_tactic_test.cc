// pool.max.f32, pool.avg.f32, pool.global_avg.f32, pool.global_max.f32 against the reference.
#include <gtest/gtest.h>

#include <limits>

#include "kernels/tactic_test_util.h"

namespace kiln::testing {
namespace {

struct PoolGeom {
  int64_t k = 3, stride = 1, pad = 0, dil = 1;
  int64_t ceil = 0;
};

OpCase pool_case(const char* op, const Dims& x, const PoolGeom& g, int opset = 19,
                 ir::Attributes extra = {}) {
  OpCase c;
  c.op_type = op;
  c.opset = opset;
  c.attrs = extra;
  const size_t spatial = x.size() - 2;
  c.attrs.set("kernel_shape", Ints(spatial, g.k));
  c.attrs.set("strides", Ints(spatial, g.stride));
  c.attrs.set("pads", Ints(2 * spatial, g.pad));
  if (g.dil != 1) c.attrs.set("dilations", Ints(spatial, g.dil));
  if (g.ceil != 0) c.attrs.set("ceil_mode", g.ceil);
  c.inputs.push_back(in(random_f32(x, 11)));
  return c;
}

// Whether the window fits and the pads are smaller than it (the op's own rule).
bool valid(int64_t in, const PoolGeom& g) {
  const int64_t extent = (g.k - 1) * g.dil + 1;
  return g.pad < extent && in + 2 * g.pad >= extent;
}

// uint8 MaxPool (a quantized tensor): every value 0..255, windows, pads, dilations, ceil mode.
Tensor pool_u8_input(const Dims& x) {
  Tensor t(DType::kU8, x);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<uint8_t>()[i] = static_cast<uint8_t>(i * 37 % 256);
  return t;
}

TEST(PoolTactic, Uint8MaxMatchesReferenceExactly) {
  for (int64_t w : {1, 7, 13, 31}) {
    for (int64_t k : {1, 2, 3}) {
      for (int64_t stride : {1, 2, 3}) {
        for (int64_t pad : {0, 1}) {
          for (int64_t dil : {1, 2}) {
            const PoolGeom g{k, stride, pad, dil, w % 2};
            if (!valid(w, g) || !valid(5, g)) continue;
            OpCase c = pool_case("MaxPool", {2, 3, 5, w}, g);
            c.inputs[0] = in(pool_u8_input({2, 3, 5, w}));
            expect_matches_reference("pool.max.u8", c, Tolerance{0, 0});
          }
        }
      }
    }
  }
  // Rows wider than the kernel's row buffer (4096 bytes) are pooled in segments.
  for (const PoolGeom& g : {PoolGeom{3, 2, 1}, PoolGeom{2, 1, 0, 3, 1}}) {
    OpCase wide = pool_case("MaxPool", {1, 2, 5, 9001}, g);
    wide.inputs[0] = in(pool_u8_input({1, 2, 5, 9001}));
    expect_matches_reference("pool.max.u8", wide, Tolerance{0, 0});
    expect_matches_reference("pool.max.f32", pool_case("MaxPool", {1, 2, 5, 2500}, g), kPointTol);
  }
  OpCase f = pool_case("MaxPool", {1, 2, 5, 5}, PoolGeom{});
  expect_rejected("pool.max.u8", f, "takes uint8, not float32");
  OpCase u = f;
  u.inputs[0] = in(pool_u8_input({1, 2, 5, 5}));
  expect_rejected("pool.max.f32", u, "uint8");
}

TEST(PoolTactic, MaxAndAverageMatchReferenceOverWindows) {
  for (int64_t w : {1, 7, 13, 31}) {
    for (int64_t k : {1, 2, 3}) {
      for (int64_t stride : {1, 2}) {
        for (int64_t pad : {0, 1}) {
          for (int64_t dil : {1, 2}) {
            for (int64_t ceil : {0, 1}) {
              const PoolGeom g{k, stride, pad, dil, ceil};
              if (!valid(w, g) || !valid(5, g)) continue;
              const Dims x{1, 3, 5, w};
              expect_matches_reference("pool.max.f32", pool_case("MaxPool", x, g), kPointTol);
              for (int64_t include : {0, 1}) {
                expect_matches_reference(
                    "pool.avg.f32",
                    pool_case("AveragePool", x, g, 19, attrs({{"count_include_pad", include}})),
                    kPointTol);
              }
            }
          }
        }
      }
    }
  }
}

// NaNs (one in five, first taps included) are skipped by the float max pool as by the reference.
TEST(PoolTactic, MaxSkipsNaNAsTheReference) {
  for (const PoolGeom& g : {PoolGeom{3, 2, 1}, PoolGeom{2, 1, 0}, PoolGeom{3, 1, 1, 2}}) {
    OpCase c = pool_case("MaxPool", {1, 3, 6, 9}, g);
    Tensor& x = *c.inputs[0].tensor;
    for (int64_t i = 0; i < x.numel(); i += 5) {
      x.data<float>()[i] = std::numeric_limits<float>::quiet_NaN();
    }
    expect_matches_reference("pool.max.f32", c, kPointTol);
  }
}

TEST(PoolTactic, ResolvesAutoPadAsymmetricPadsAndOneDimension) {
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    OpCase c = pool_case("MaxPool", {2, 5, 9, 8}, {3, 2, 0});
    c.attrs.erase("pads");
    c.attrs.set("auto_pad", std::string(mode));
    expect_matches_reference("pool.max.f32", c, kPointTol);
    c.op_type = "AveragePool";
    expect_matches_reference("pool.avg.f32", c, kPointTol);
  }
  OpCase asym = pool_case("AveragePool", {1, 2, 7, 9}, {3, 2, 0}, 19,
                          attrs({{"count_include_pad", int64_t{1}}}));
  asym.attrs.set("pads", Ints{0, 1, 2, 1});
  expect_matches_reference("pool.avg.f32", asym, kPointTol);
  expect_matches_reference("pool.max.f32", pool_case("MaxPool", {2, 3, 17}, {3, 2, 1}), kPointTol);
  expect_matches_reference("pool.avg.f32", pool_case("AveragePool", {2, 3, 17}, {2, 1, 1, 2, 1}),
                           kPointTol);
}

TEST(PoolTactic, OlderOpsetsReadTheirAttributes) {
  // MaxPool 8 has no ceil_mode; AveragePool 7 has count_include_pad but no dilations.
  expect_matches_reference("pool.max.f32", pool_case("MaxPool", {1, 2, 6, 6}, {2, 2, 0}, 8),
                           kPointTol);
  expect_matches_reference("pool.avg.f32",
                           pool_case("AveragePool", {1, 2, 6, 6}, {3, 1, 1}, 7,
                                     attrs({{"count_include_pad", int64_t{1}}})),
                           kPointTol);
}

TEST(PoolTactic, GlobalPoolsMatchReference) {
  for (const Dims& x : {Dims{1, 1, 1}, Dims{2, 3, 7, 7}, Dims{1, 5, 13, 31}, Dims{2, 3, 2, 3, 4}}) {
    for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
      OpCase c;
      c.op_type = op;
      c.inputs = {in(random_f32(x, 3))};
      const std::string tactic =
          std::string(op) == "GlobalMaxPool" ? "pool.global_max.f32" : "pool.global_avg.f32";
      expect_matches_reference(tactic, c, kPointTol);
    }
  }
}

TEST(PoolTactic, RefusesIndicesOtherDtypesAndRanks) {
  OpCase c = pool_case("MaxPool", {1, 2, 6, 6}, {2, 2, 0});
  c.num_outputs = 2;
  expect_rejected("pool.max.f32", c, "Indices");
  OpCase d = pool_case("MaxPool", {1, 2, 6, 6}, {2, 2, 0});
  d.inputs = {in(Tensor(DType::kF64, {1, 2, 6, 6}))};
  expect_rejected("pool.max.f32", d, "float64");
  expect_rejected("pool.avg.f32", pool_case("AveragePool", {1, 2, 4, 4, 4}, {2, 2, 0}), "rank 5");
}

}  // namespace
}  // namespace kiln::testing
