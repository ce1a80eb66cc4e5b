#pragma once
// The cases every kiln.QConv / kiln.QGemm tactic test builds (x86 and portable), and the
// comparison with the reference executor.
//
// Tolerances, and why: the integer accumulators are exact in every kernel, so differences come
// from the float epilogue only. Float outputs: the kernels may fuse float(acc) * scale + bias
// into one FMA (one rounding less than the reference) and use kernels_math.h's exp / erf / tanh
// approximations (~1e-7 relative; tested at 1e-4 for the float kernels too). uint8 outputs: the
// kernels divide by y_scale as a multiplication by 1 / y_scale, and the last-bit differences above
// can move a value across a rounding boundary: at most one quantization step, and rarely (a
// systematic off-by-one, such as a wrong rounding mode, shows up as many differences: the check
// allows 2% of the elements, at least 2).

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/conv_cases.h"
#include "kernels/tactic_test_util.h"
#include "ops/nhwc.h"
#include "runtime/reference_executor.h"

namespace kiln::testing {

struct QuantOpts {
  int x_zero = 128;
  bool out_u8 = false;
  int y_zero = 128;
  bool bias = true;
  int residual = 0;  // 0: none, 1: float32, 2: uint8
  std::string act;   // "" for none
  std::vector<float> act_params;
};

inline Tensor random_u8(const Dims& dims, uint64_t seed, int lo = 0, int hi = 255) {
  Tensor t(DType::kU8, dims);
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  for (uint8_t& v : t.span<uint8_t>()) v = static_cast<uint8_t>(dist(gen));
  return t;
}

inline Tensor random_s8(const Dims& dims, uint64_t seed) {
  Tensor t(DType::kI8, dims);
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<int> dist(-128, 127);
  for (int8_t& v : t.span<int8_t>()) v = static_cast<int8_t>(dist(gen));
  return t;
}

// Per-channel weight scales around 5e-3 / sqrt(depth): with x_scale 0.02 the outputs are O(1).
inline Tensor weight_scales(int64_t n, int64_t depth, uint64_t seed) {
  Tensor t = random_f32({n}, seed);
  const float base = 5e-3f / std::sqrt(static_cast<float>(std::max<int64_t>(depth, 1)));
  for (float& v : t.span<float>()) v = base * (1.0f + 0.5f * v);
  return t;
}

// The quantization attributes and the optional inputs B and Z (after the scales) of a case.
inline void add_quant_parts(OpCase& c, const QuantOpts& o, const std::string& prefix,
                            int64_t channels, const Dims& y, uint64_t seed) {
  c.attrs.set(prefix + "_scale", 0.02f);
  c.attrs.set(prefix + "_zero_point", int64_t{o.x_zero});
  if (o.out_u8) {
    c.attrs.set("output_type", int64_t{2});
    c.attrs.set("y_scale", 0.01f);
    c.attrs.set("y_zero_point", int64_t{o.y_zero});
  }
  if (!o.act.empty()) c.attrs.set("activation", o.act);
  if (!o.act_params.empty()) c.attrs.set("activation_params", o.act_params);
  if (o.bias) {
    c.inputs.push_back(constant(random_f32({channels}, seed + 3)));
  } else if (o.residual != 0) {
    c.inputs.push_back(absent());
  }
  if (o.residual == 1) {
    c.inputs.push_back(in(random_f32(y, seed + 4)));
  }
  if (o.residual == 2) {
    c.inputs.push_back(in(random_u8(y, seed + 4)));
    c.attrs.set("z_scale", 0.005f);
    c.attrs.set("z_zero_point", int64_t{100});
  }
}

// kiln.QConv over a ConvGeom: uint8 X, int8 W, per-channel scales, the options' parts.
inline OpCase qconv_case(const ConvGeom& g, const QuantOpts& o = {}, uint64_t seed = 1) {
  OpCase c;
  c.op_type = "QConv";
  c.domain = "kiln";
  c.opset = 1;
  c.attrs = attrs({{"group", g.group},
                   {"strides", Ints{g.stride, g.stride}},
                   {"pads", Ints{g.pad, g.pad, g.pad, g.pad}},
                   {"dilations", Ints{g.dil, g.dil}}});
  c.inputs.push_back(in(random_u8({g.batch, g.cin, g.h, g.w}, seed)));
  c.inputs.push_back(constant(random_s8({g.cout, g.cin / g.group, g.kh, g.kw}, seed + 1)));
  c.inputs.push_back(constant(weight_scales(g.cout, g.cin / g.group * g.kh * g.kw, seed + 2)));
  const Dims y{g.batch, g.cout, conv_out_dim(g.h, g.kh, g.stride, g.pad, g.dil),
               conv_out_dim(g.w, g.kw, g.stride, g.pad, g.dil)};
  add_quant_parts(c, o, "x", g.cout, y, seed);
  return c;
}

// qconv_case's layer as kiln.QConvNhwc: X and the residual Z transposed to channels-last (W stays
// [M, C, KH, KW]).
inline OpCase qconv_nhwc_case(const ConvGeom& g, const QuantOpts& o = {}, uint64_t seed = 1) {
  OpCase c = qconv_case(g, o, seed);
  c.op_type = "QConvNhwc";
  c.inputs[0].tensor = ops::permuted(*c.inputs[0].tensor, ops::kNchwToNhwc);
  if (c.inputs.size() > 4 && c.inputs[4].tensor) {
    c.inputs[4].tensor = ops::permuted(*c.inputs[4].tensor, ops::kNchwToNhwc);
  }
  return c;
}

// lead with `last` appended. Room reserved first: GCC 12 (-O3) misreads push_back's growth after
// a copy (-Warray-bounds) and a std::copy into a sized vector (-Wstringop-overflow), both false
// positives.
inline Dims append_dim(const Dims& lead, int64_t last) {
  Dims d;
  d.reserve(lead.size() + 1);
  d.assign(lead.begin(), lead.end());
  d.push_back(last);
  return d;
}

// kiln.QGemm: A [lead..., k] (uint8), B [k, n] (int8).
inline OpCase qgemm_case(const Dims& lead, int64_t k, int64_t n, const QuantOpts& o = {},
                         uint64_t seed = 1) {
  OpCase c;
  c.op_type = "QGemm";
  c.domain = "kiln";
  c.opset = 1;
  const Dims y = append_dim(lead, n);
  c.inputs.push_back(in(random_u8(append_dim(lead, k), seed)));
  c.inputs.push_back(constant(random_s8({k, n}, seed + 1)));
  c.inputs.push_back(constant(weight_scales(n, k, seed + 2)));
  add_quant_parts(c, o, "a", n, y, seed);
  return c;
}

// Rewrites int8 weights, viewed as [outer, depth, inner], so that every pair of depth rows
// (2i, 2i + 1) is within vpmaddubsw's exact bound (same-sign sums of at most 128, qkernels.h),
// with the extremes on purpose: (64, 64), (-64, -64), (127, -128), (-128, 127), (100, 28), and
// random pairs inside the bound. Conv weights: [out_c, in_c / group, kh * kw]; GEMM's B: [1, k, n].
inline void bound_maddubs_pairs(Tensor& w, int64_t outer, int64_t depth, int64_t inner,
                                uint64_t seed) {
  std::mt19937_64 gen(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); };
  int8_t* d = w.data<int8_t>();
  int64_t n = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t r = 0; r + 1 < depth; r += 2) {
      for (int64_t i = 0; i < inner; ++i, ++n) {
        static constexpr int kEdges[5][2] = {
            {64, 64}, {-64, -64}, {127, -128}, {-128, 127}, {100, 28}};
        int a = 0, b = 0;
        if (n % 7 < 5) {
          a = kEdges[n % 7][0];
          b = kEdges[n % 7][1];
        } else {
          a = pick(-128, 127);
          b = a >= 0 ? pick(-128, 128 - a) : pick(-128 - a, 127);
          if (pick(0, 1) == 1) std::swap(a, b);
        }
        d[(o * depth + r) * inner + i] = static_cast<int8_t>(a);
        d[(o * depth + r + 1) * inner + i] = static_cast<int8_t>(b);
      }
    }
  }
}

// qconv_case with weights inside the pair bound (bound_maddubs_pairs).
inline OpCase qconv_maddubs_case(const ConvGeom& g, const QuantOpts& o = {}, uint64_t seed = 1) {
  OpCase c = qconv_case(g, o, seed);
  bound_maddubs_pairs(*c.inputs[1].tensor, g.cout, g.cin / g.group, g.kh * g.kw, seed + 7);
  return c;
}

// A depthwise qconv_case with weights inside the pair bound: pairs of taps along a kernel row.
inline OpCase qdw_maddubs_case(const ConvGeom& g, const QuantOpts& o = {}, uint64_t seed = 1) {
  OpCase c = qconv_case(g, o, seed);
  bound_maddubs_pairs(*c.inputs[1].tensor, g.cout * g.kh, g.kw, 1, seed + 7);
  return c;
}

// qgemm_case with B inside the pair bound.
inline OpCase qgemm_maddubs_case(const Dims& lead, int64_t k, int64_t n, const QuantOpts& o = {},
                                 uint64_t seed = 1) {
  OpCase c = qgemm_case(lead, k, n, o, seed);
  bound_maddubs_pairs(*c.inputs[1].tensor, 1, k, n, seed + 7);
  return c;
}

// The input at 255 everywhere: with bounded weights, pair sums at 255 * 128 = 32640.
inline OpCase saturated_input(OpCase c) {
  for (uint8_t& v : c.inputs[0].tensor->span<uint8_t>()) v = 255;
  return c;
}

// Float outputs: the epilogue's FMA and activation approximations (see above).
inline constexpr Tolerance kQuantFloatTol{1e-5, 1e-5};
inline constexpr Tolerance kQuantActTol{1e-4, 1e-4};

// "" when `got` matches `want`: float within `tol`; uint8 within one step, and exactly in all
// but 2% of the elements (at least 2 may differ).
inline std::string compare_quant(const Tensor& got, const Tensor& want, Tolerance tol) {
  if (got.dtype() != DType::kU8) return compare_tensors(got, want, tol);
  std::string why = compare_tensors(got, want, {0, 1});
  if (!why.empty()) return why;
  int64_t off = 0;
  for (int64_t i = 0; i < got.numel(); ++i)
    off += got.data<uint8_t>()[i] != want.data<uint8_t>()[i];
  if (off > std::max<int64_t>(2, got.numel() / 50)) {
    return std::to_string(off) + " of " + std::to_string(got.numel()) +
           " uint8 elements are one step off: more than rounding noise";
  }
  return "";
}

// The tactic accepts the case, allocates nothing in run(), and matches the reference.
inline void expect_quant_matches(const std::string& tactic, const OpCase& c,
                                 Tolerance tol = kQuantFloatTol) {
  SCOPED_TRACE(tactic + " on " + case_text(c));
  auto want = run_op(c);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  auto got = run_tactic(tactic, c);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  ASSERT_EQ(got->outputs.size(), want->size());
  EXPECT_EQ(compare_quant(got->outputs[0], (*want)[0], tol), "");
  EXPECT_EQ(got->run_allocations, 0) << "run() allocated";
}

// uint8 outputs under Clip, as the kernels' direct epilogue folds the bounds into the uint8 clamp:
// bounds wider than the output's range, both inside it, one below the zero point's floor
// (y_zero 0), min above max (every output is max: not a clamp), and one bound absent; with and
// without a uint8 residual.
inline std::vector<QuantOpts> clip_to_uint8_cases() {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<std::vector<float>> bounds = {
      {0.0f, 6.0f}, {-0.5f, 0.25f}, {0.5f, -0.5f}, {-inf, 0.1f}};
  std::vector<QuantOpts> out;
  for (const auto& b : bounds) {
    for (int y_zero : {128, 0}) {
      for (int residual : {0, 2}) {
        out.push_back({.out_u8 = true,
                       .y_zero = y_zero,
                       .residual = residual,
                       .act = "Clip",
                       .act_params = b});
      }
    }
  }
  return out;
}

inline std::string quant_opts_text(const QuantOpts& o) {
  std::string s = "y_zero " + std::to_string(o.y_zero) + ", residual " +
                  std::to_string(o.residual) + ", " + o.act;
  for (float p : o.act_params) s += " " + std::to_string(p);
  return s;
}

// Every activation, with its case: the tolerance to use.
inline Tolerance act_tol(const ActCase& a) {
  return a.name.empty() ? kQuantFloatTol : kQuantActTol;
}

}  // namespace kiln::testing
