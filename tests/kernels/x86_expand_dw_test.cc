// kernels::x86::nchw16c_expand_dw_run against the two layers it fuses run one after the other
// (nchw16c_conv_run: the pointwise expansion into a whole tensor, then the depthwise layer over
// it): bit-identical outputs over channel tails, strides, pads, dilations, windows taller than a
// band, bands of one row, residuals, activations, batches and several row chunks. And the
// conv.expand_dw.nchw16c.f32.* tactics against kiln.ExpandDwNchw16c's reference, through the
// engine's prepacked path on threads, with what they refuse.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/conv_cases.h"
#include "kernels/ref/layout.h"
#include "kernels/x86_test_util.h"

namespace kiln::testing {
namespace x86_expand_dw_test {

namespace kx = kernels::x86;
namespace cpu = kernels::cpu;

struct ExpandDwCase {
  int64_t batch = 1, cin = 16, cexp = 32, h = 9, w = 11;
  int64_t k = 3, stride = 1, pad = 1, dil = 1;
  bool residual = false;
  int threads = 1;
  int64_t band_bytes = 0;  // 0: one band row's worth (the smallest band)
};

cpu::Conv2DParams pointwise_params(const ExpandDwCase& c) {
  cpu::Conv2DParams p;
  p.batch = c.batch;
  p.in_c = c.cin;
  p.in_h = c.h;
  p.in_w = c.w;
  p.out_c = c.cexp;
  p.k_h = p.k_w = 1;
  p.out_h = c.h;
  p.out_w = c.w;
  return p;
}

cpu::Conv2DParams depthwise_params(const ExpandDwCase& c) {
  cpu::Conv2DParams p;
  p.batch = c.batch;
  p.in_c = p.out_c = p.group = c.cexp;
  p.in_h = c.h;
  p.in_w = c.w;
  p.k_h = p.k_w = c.k;
  p.stride_h = p.stride_w = c.stride;
  p.pad_top = p.pad_left = c.pad;
  p.dil_h = p.dil_w = c.dil;
  const int64_t span = (c.k - 1) * c.dil + 1;
  p.out_h = (c.h + 2 * c.pad - span) / c.stride + 1;
  p.out_w = (c.w + 2 * c.pad - span) / c.stride + 1;
  return p;
}

std::vector<float> wave(size_t n, float scale, float phase) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.37f * static_cast<float>(i) + phase);
  return v;
}

std::vector<float> packed(const cpu::Conv2DParams& p, float phase) {
  const std::vector<float> w =
      wave(static_cast<size_t>(p.out_c * (p.in_c / p.group) * p.k_h * p.k_w), 0.3f, phase);
  std::vector<float> out(kx::nchw16c_conv_packed_weights_floats(p));
  kx::nchw16c_conv_pack_weights(p, w.data(), out.data());
  return out;
}

void expect_fused_matches_layers(kx::Isa isa, const ExpandDwCase& c, const kx::Epilogue& pw_ep,
                                 const kx::Epilogue& dw_ep) {
  const cpu::Conv2DParams pp = pointwise_params(c), dp = depthwise_params(c);
  const int64_t cin_p = kernels::ref::padded_channels(c.cin);
  const int64_t cexp_p = kernels::ref::padded_channels(c.cexp);
  const std::vector<float> x = wave(static_cast<size_t>(c.batch * cin_p * c.h * c.w), 1.0f, 0.1f);
  const std::vector<float> pw_w = packed(pp, 0.5f), dw_w = packed(dp, 0.9f);
  const std::vector<float> pw_b = wave(static_cast<size_t>(c.cexp), 0.2f, 1.3f);
  const std::vector<float> dw_b = wave(static_cast<size_t>(c.cexp), 0.2f, 1.7f);
  const size_t y_size = static_cast<size_t>(c.batch * cexp_p * dp.out_h * dp.out_w);
  const std::vector<float> z = wave(y_size, 0.5f, 2.1f);

  // The layers one after the other.
  std::vector<float> e(static_cast<size_t>(c.batch * cexp_p * c.h * c.w));
  std::vector<float> want(y_size);
  const kx::Nchw16cConvPlan pw_plan = kx::plan_nchw16c_conv(isa, pp, 1);
  kx::Nchw16cConvIo pw_io;
  pw_io.x = x.data();
  pw_io.bias = pw_b.data();
  pw_io.y = e.data();
  kx::nchw16c_conv_run(pw_plan, pw_w.data(), pw_io, pw_ep, 0, pw_plan.tasks);
  const kx::Nchw16cConvPlan dw_plan = kx::plan_nchw16c_conv(isa, dp, 1);
  kx::Nchw16cConvIo dw_io;
  dw_io.x = e.data();
  dw_io.bias = dw_b.data();
  dw_io.residual = c.residual ? z.data() : nullptr;
  dw_io.y = want.data();
  kx::nchw16c_conv_run(dw_plan, dw_w.data(), dw_io, dw_ep, 0, dw_plan.tasks);

  // Fused, each task on its own scratch as a thread would.
  const kx::Nchw16cExpandDwPlan plan =
      kx::plan_nchw16c_expand_dw(isa, pp, dp, c.threads, c.band_bytes);
  ASSERT_GE(plan.band_rows, 1);
  std::vector<float> got(y_size, NAN);
  for (int64_t t = 0; t < plan.tasks; ++t) {
    std::vector<float> scratch(kx::nchw16c_expand_dw_scratch_floats(plan), NAN);
    kx::Nchw16cExpandDwIo io;
    io.x = x.data();
    io.pw_bias = pw_b.data();
    io.dw_bias = dw_b.data();
    io.residual = c.residual ? z.data() : nullptr;
    io.y = got.data();
    io.scratch = scratch.data();
    kx::nchw16c_expand_dw_run(plan, pw_w.data(), dw_w.data(), io, pw_ep, dw_ep, t, t + 1);
  }
  for (size_t i = 0; i < y_size; ++i) {
    ASSERT_EQ(got[i], want[i]) << "element " << i << " of " << y_size << " (band of "
                               << plan.band_rows << " rows)";
  }
}

kx::Epilogue relu6() {
  kx::Epilogue ep;
  ep.act = kx::Act::kClip;
  ep.act_alpha = 0.0f;
  ep.act_beta = 6.0f;
  return ep;
}

TEST(X86ExpandDw, MatchesTheTwoLayersOverShapesBandsAndChunks) {
  const auto isas = x86_kernel_isas();
  if (isas.empty()) GTEST_SKIP() << "the host (or KILN_MAX_ISA) has neither AVX2 nor AVX-512";
  std::vector<ExpandDwCase> cases;
  for (int64_t cexp : {8, 16, 40, 144}) {
    for (int64_t stride : {1, 2}) {
      for (int64_t band : {int64_t{0}, int64_t{1} << 20}) {
        for (int threads : {1, 3}) {
          ExpandDwCase c;
          c.cin = 24;
          c.cexp = cexp;
          c.stride = stride;
          c.band_bytes = band;
          c.threads = threads;
          c.residual = stride == 1;
          cases.push_back(c);
        }
      }
    }
  }
  // 5x5 windows (EfficientNet), a dilation, no padding, a batch, one-row and one-column images.
  cases.push_back({.cin = 17, .cexp = 33, .h = 13, .w = 10, .k = 5, .stride = 1, .pad = 2});
  cases.push_back({.cin = 17, .cexp = 33, .h = 13, .w = 10, .k = 5, .stride = 2, .pad = 2});
  cases.push_back({.cin = 16, .cexp = 16, .h = 12, .w = 12, .k = 3, .pad = 2, .dil = 2});
  cases.push_back({.cin = 3, .cexp = 20, .h = 8, .w = 9, .k = 3, .pad = 0, .threads = 2});
  cases.push_back({.batch = 3, .cin = 16, .cexp = 48, .h = 7, .w = 7, .threads = 2});
  cases.push_back({.cin = 16, .cexp = 32, .h = 1, .w = 9});
  cases.push_back({.cin = 16, .cexp = 32, .h = 9, .w = 1});
  for (kx::Isa isa : isas) {
    for (const ExpandDwCase& c : cases) {
      SCOPED_TRACE(::testing::Message()
                   << (isa == kx::Isa::kAvx512 ? "avx512" : "avx2") << " b" << c.batch << " "
                   << c.cin << "->" << c.cexp << " " << c.h << "x" << c.w << " k" << c.k << " s"
                   << c.stride << " p" << c.pad << " d" << c.dil << " band " << c.band_bytes
                   << " threads " << c.threads);
      expect_fused_matches_layers(isa, c, relu6(), relu6());
      kx::Epilogue none;
      expect_fused_matches_layers(isa, c, none, relu6());
    }
  }
}

// kiln.ExpandDwNchw16c of g's depthwise window over an expansion of `cin` channels to g.cin: X
// blocked, the two layers' weights and biases, a residual when asked, ReLU6 after the expansion
// and `act` after the depthwise layer.
OpCase expand_dw_case(const ConvGeom& g, int64_t cin, bool residual, const ActCase& act) {
  OpCase c = nchw16c_case(g, true, residual, act);
  c.op_type = "ExpandDwNchw16c";
  c.attrs.set("expand_activation", std::string("Clip"));
  c.attrs.set("expand_activation_params", std::vector<float>{0.0f, 6.0f});
  const OpCase dw = c;
  c.inputs = {in(random_f32({g.batch, kernels::ref::padded_channels(cin), g.h, g.w}, 21)),
              constant(random_f32({g.cin, cin, 1, 1}, 22)), constant(random_f32({g.cin}, 23)),
              dw.inputs[1], dw.inputs[2]};
  if (residual) c.inputs.push_back(dw.inputs[3]);
  return c;
}

TEST(X86ExpandDw, TacticsMatchTheReference) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  constexpr Tolerance kTol{1e-4, 1e-4};
  for (const std::string& isa : isas) {
    const std::string tactic = "conv.expand_dw.nchw16c.f32." + isa;
    for (int64_t stride : {1, 2}) {
      for (const ActCase& act : {ActCase{"", {}}, ActCase{"Silu", {}}}) {
        const ConvGeom g{.batch = 2,
                         .cin = 40,
                         .cout = 40,
                         .group = 40,
                         .h = 11,
                         .w = 9,
                         .stride = stride,
                         .pad = 1};
        SCOPED_TRACE(::testing::Message() << tactic << " s" << stride << " " << act.name);
        expect_matches_reference(tactic, expand_dw_case(g, 17, stride == 1, act), kTol);
        expect_matches_reference_prepacked(tactic, expand_dw_case(g, 17, false, act), kTol,
                                           {.threads = 2});
      }
    }
    const ConvGeom g5{.cin = 24,
                      .cout = 24,
                      .group = 24,
                      .h = 13,
                      .w = 12,
                      .kh = 5,
                      .kw = 5,
                      .stride = 2,
                      .pad = 2};
    expect_matches_reference(tactic, expand_dw_case(g5, 16, false, {"Silu", {}}), kTol);
    // Depthwise weights that are an input, not a constant to pack.
    OpCase runtime_w = expand_dw_case(g5, 16, false, {});
    runtime_w.inputs[3] = in(random_f32({24, 1, 5, 5}, 24));
    expect_rejected(tactic, runtime_w, "not 4-D constants");
  }
}

}  // namespace x86_expand_dw_test
}  // namespace kiln::testing
