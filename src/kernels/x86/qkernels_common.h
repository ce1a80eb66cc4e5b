#pragma once
// What the INT8 kernel templates (qkernels_conv_impl.h, qkernels_dw_impl.h,
// qkernels_gemm_impl.h) share, over an INT8 traits type Q (qvec_vnni.h, qvec_avx2.h): the
// epilogue of one accumulator vector, written lane range by lane range. Included by each ISA's
// translation unit; everything sits in an anonymous namespace, as kernels_impl.h explains.

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/x86/kernels_impl.h"
#include "kernels/x86/qkernels.h"

namespace kiln::kernels::x86 {
namespace {

// A run of lanes [lo, hi) of an accumulator vector whose outputs are contiguous in Y: lane l is
// Y's (and the residual's) flat element base + off + l.
struct QSeg {
  int lo = 0, hi = 0;
  int64_t off = 0;
};

// The vectors of a convolution's patch panel: vector v's lanes are Y's elements seg[v].off + l.
template <class Q>
struct QPanelSegs {
  QSeg seg[Q::kNv];
  // Every vector is full, each following the one before in Y (a panel away from the image's end).
  bool contiguous = false;
};

// The epilogue's constants, built once per run call.
template <class Q>
struct QOut {
  using V = typename Q::F::V;
  using I = typename Q::I;
  const QEpilogue* e = nullptr;
  Epilogue act;  // the activation, in the float kernels' form
  V inv_y, lo, hi, z_scale;
  I y_zero, z_zero;
  void* y = nullptr;
  // uint8 output, no float residual, activation none, ReLU or Clip (an INT8 network's usual
  // layers: ReLU6 is MobileNet's): the callers fold 1 / y_scale into the scale and bias (see
  // scaled() and bias()), no NaN can arise, and the activation narrows the requantization's clamp
  // (ReLU: floor 0; Clip(a, b): [a / y_scale, b / y_scale]). A uint8 residual z adds
  // z * z_scale / y_scale. The output's zero point is in the bias (and in the clamp's bounds), as
  // is the residual's: an integer added before rounding, so no integer add after it. Within the
  // one step of kernels/ref's result the tests allow.
  bool direct_u8 = false;
  // The direct path's floor is above 0 (a ReLU whose output zero point is not 0, a Clip above
  // it): a saturating store (Q::store_u8_saturated) alone does not clamp it.
  bool direct_floor = false;
  float inv = 1.0f;
  // Direct path: y_zero - z_zero * z_scale / y_scale (the latter with a uint8 residual); else 0.
  float bias_shift = 0.0f;
  V direct_lo, direct_hi, direct_z_scale;

  explicit QOut(const QEpilogue& ep, void* out) : e(&ep), y(out) {
    act.act = ep.act.kind;
    act.act_alpha = ep.act.alpha;
    act.act_beta = ep.act.beta;
    inv_y = Q::F::set1(1.0f / ep.y_scale);
    lo = Q::F::set1(static_cast<float>(-ep.y_zero));
    hi = Q::F::set1(static_cast<float>(255 - ep.y_zero));
    z_scale = Q::F::set1(ep.z_scale);
    y_zero = Q::set1(ep.y_zero);
    z_zero = Q::set1(ep.z_zero);
    inv = 1.0f / ep.y_scale;
    // The clamp before the zero point is added: the uint8 range, narrowed by the activation.
    float clamp_lo = static_cast<float>(-ep.y_zero), clamp_hi = static_cast<float>(255 - ep.y_zero);
    bool act_is_clamp = ep.act.kind == Act::kNone;
    if (ep.act.kind == Act::kRelu) {
      clamp_lo = std::max(clamp_lo, 0.0f);
      act_is_clamp = true;
    } else if (ep.act.kind == Act::kClip && ep.act.alpha <= ep.act.beta) {  // false on NaN bounds
      clamp_lo = std::max(clamp_lo, ep.act.alpha * inv);
      clamp_hi = std::min(clamp_hi, ep.act.beta * inv);
      act_is_clamp = clamp_lo <= clamp_hi;
    }
    direct_u8 = ep.out_u8 && ep.z_f32 == nullptr && act_is_clamp;
    const auto y_zero_f = static_cast<float>(ep.y_zero);
    direct_lo = Q::F::set1(clamp_lo + y_zero_f);
    direct_hi = Q::F::set1(clamp_hi + y_zero_f);
    direct_floor = clamp_lo + y_zero_f > 0.0f;
    direct_z_scale = Q::F::set1(ep.z_scale * inv);
    if (direct_u8) {
      bias_shift = y_zero_f;
      if (ep.z_u8 != nullptr) bias_shift -= static_cast<float>(ep.z_zero) * ep.z_scale * inv;
    }
  }
  // A channel's scale as q_finish takes it.
  float scaled(float v) const { return direct_u8 ? v * inv : v; }
  V scaled(V v) const { return direct_u8 ? Q::F::mul(v, inv_y) : v; }
  // A channel's bias (null: none) as q_finish takes it.
  float bias(const float* b, int64_t i) const {
    return (b != nullptr ? scaled(b[i]) : 0.0f) + bias_shift;
  }
  V bias(V scaled_bias) const { return Q::F::add(scaled_bias, Q::F::set1(bias_shift)); }
};

// -(x_zero * sum W) as the accumulators' start, in wrapping 32-bit arithmetic like the sums.
inline int32_t zero_point_start(int32_t x_zero, int32_t wsum) {
  return static_cast<int32_t>(0u - static_cast<uint32_t>(x_zero) * static_cast<uint32_t>(wsum));
}

// The direct path's (QOut::direct_u8) last step: q = v / y_scale + y_zero clamped and rounded.
template <class Q>
inline __attribute__((always_inline)) typename Q::I direct_u8_quantize(const QOut<Q>& o,
                                                                       typename Q::F::V q) {
  using F = typename Q::F;
  return Q::round(F::min(F::max(q, o.direct_lo), o.direct_hi));
}

// The same for Q::store_u8_saturated, whose saturation is the floor at 0: only a floor above it
// is applied. The ceiling stays (a value past 2^31 would convert to INT_MIN, and saturate to 0).
template <class Q>
inline __attribute__((always_inline)) typename Q::I direct_u8_round(const QOut<Q>& o,
                                                                    typename Q::F::V q) {
  using F = typename Q::F;
  q = F::min(q, o.direct_hi);
  return Q::round(o.direct_floor ? F::max(q, o.direct_lo) : q);
}

// The general path's value of one accumulator vector before the activation: float(acc) * scale +
// bias + the residual z over the lanes [s.lo, s.hi) (Y's elements base + s.off + lane).
template <class Q>
inline __attribute__((always_inline)) typename Q::F::V q_linear(const QOut<Q>& o, typename Q::I acc,
                                                                typename Q::F::V scale,
                                                                typename Q::F::V bias,
                                                                const QSeg& s, int64_t base) {
  using F = typename Q::F;
  const QEpilogue& e = *o.e;
  typename F::V v = F::add(F::mul(Q::to_float(acc), scale), bias);
  if (e.z_f32 != nullptr) {
    v = F::add(v, Q::load_f32(e.z_f32 + base + s.off, s.lo, s.hi, F::zero()));
  }
  if (e.z_u8 != nullptr) {
    const typename Q::I z = Q::load_u8(e.z_u8 + base + s.off, s.lo, s.hi, o.z_zero);
    v = F::add(v, F::mul(Q::to_float(Q::sub(z, o.z_zero)), o.z_scale));
  }
  return v;
}

// The activation of N such values at once: Sigmoid and SiLU (EfficientNet's) as N independent
// chains (kernels_math.h's activate_n). One vector at a time, SiLU's chain of some twenty dependent
// operations took 30% of EfficientNet-B0's INT8 time on an AVX2 host.
template <class Q, int N>
inline __attribute__((always_inline)) void q_activate(const QOut<Q>& o, typename Q::F::V* v) {
  if (o.act.act != Act::kNone) activate_n<typename Q::F, N>(o.act, v);
}

// Stores one activated value: float, or requantized to uint8.
template <class Q>
inline __attribute__((always_inline)) void q_store(const QOut<Q>& o, typename Q::F::V v,
                                                   const QSeg& s, int64_t base) {
  if (o.e->out_u8) {
    const typename Q::I q = Q::requantize(v, o.inv_y, o.lo, o.hi, o.y_zero);
    Q::store_u8(static_cast<uint8_t*>(o.y) + base + s.off, q, s.lo, s.hi);
  } else {
    Q::store_f32(static_cast<float*>(o.y) + base + s.off, v, s.lo, s.hi);
  }
}

// The direct path (QOut::direct_u8) of one accumulator vector: scale and bias already divided by
// y_scale, the activation folded into the clamp.
template <class Q>
inline __attribute__((always_inline)) void q_direct(const QOut<Q>& o, typename Q::I acc,
                                                    typename Q::F::V scale, typename Q::F::V bias,
                                                    const QSeg& s, int64_t base) {
  using F = typename Q::F;
  typename F::V q = F::fmadd(Q::to_float(acc), scale, bias);
  if (o.e->z_u8 != nullptr) {
    const typename Q::I z = Q::load_u8(o.e->z_u8 + base + s.off, s.lo, s.hi, o.z_zero);
    q = F::fmadd(Q::to_float(z), o.direct_z_scale, q);
  }
  Q::store_u8(static_cast<uint8_t*>(o.y) + base + s.off, direct_u8_quantize(o, q), s.lo, s.hi);
}

// Finishes the accumulator vectors acc[0, N) of a kernel's epilogue: v = act(float(acc) * scale +
// bias + z), stored (float, or requantized). `each(fn)` calls fn(i, scale, bias, seg, base) for
// every vector i it finishes (scale and bias through o.scaled(); lanes seg of Y's elements
// base + seg.off + lane); vectors it skips are left alone. The general path computes all linear
// parts, then activates them together, then stores.
template <class Q, int N, class Each>
inline __attribute__((always_inline)) void q_finish(const QOut<Q>& o, const typename Q::I* acc,
                                                    Each&& each) {
  using V = typename Q::F::V;
  if (o.direct_u8) {
    each([&](int i, V scale, V bias, const QSeg& s, int64_t base)
             __attribute__((always_inline)) { q_direct<Q>(o, acc[i], scale, bias, s, base); });
    return;
  }
  V v[N];
#pragma GCC unroll 16
  for (int i = 0; i < N; ++i) v[i] = Q::F::zero();
  each([&](int i, V scale, V bias, const QSeg& s, int64_t base)
           __attribute__((always_inline)) { v[i] = q_linear<Q>(o, acc[i], scale, bias, s, base); });
  q_activate<Q, N>(o, v);
  each([&](int i, V, V, const QSeg& s, int64_t base)
           __attribute__((always_inline)) { q_store<Q>(o, v[i], s, base); });
}

}  // namespace
}  // namespace kiln::kernels::x86
