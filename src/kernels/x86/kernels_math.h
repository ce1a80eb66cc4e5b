#pragma once
// The epilogue's math over a vector-traits type T (vec_avx512.h, vec_avx2.h): exp, the activations
// and the per-tile epilogue itself. Included by the kernels' *_impl.h headers inside their
// anonymous namespace, so each ISA's copy stays in its own translation unit.
//
// Accuracy against the reference (double-free float math with std::exp, std::tanh, std::erf):
// exp_v within ~2 ulp (vec_util.h's algorithm), exp_parts (sigmoid, GELU, softmax) within 3.5 ulp
// for |x| <= 20 (6.5 at -86) and sigmoid within 5, tanh within ~1e-7 relative, erf (Abramowitz
// and Stegun 7.1.26) within 1.5e-7 absolute, well inside the fused-kernel tolerances.

// --- exp and the activations ---------------------------------------------------------------------

// exp(x) = 2^n * p for x within the float range: n = round(x / ln2) (returned), p = exp(r) by its
// degree-7 Taylor polynomial on r = x - n ln2, ln2 split in two so that n * ln2's high part is
// exact.
template <class T>
inline __attribute__((always_inline)) typename T::V exp_reduced(typename T::V x, typename T::V& n) {
  using V = typename T::V;
  n = T::round(T::mul(x, T::set1(1.44269504088896341f)));
  V r = T::fmadd(n, T::set1(-0.693359375f), x);
  r = T::fmadd(n, T::set1(2.12194440e-4f), r);
  V p = T::set1(1.0f / 5040.0f);
  p = T::fmadd(p, r, T::set1(1.0f / 720.0f));
  p = T::fmadd(p, r, T::set1(1.0f / 120.0f));
  p = T::fmadd(p, r, T::set1(1.0f / 24.0f));
  p = T::fmadd(p, r, T::set1(1.0f / 6.0f));
  p = T::fmadd(p, r, T::set1(0.5f));
  p = T::fmadd(p, r, T::set1(1.0f));
  return T::fmadd(p, r, T::set1(1.0f));
}

template <class T>
inline __attribute__((always_inline)) typename T::V exp_v(typename T::V x) {
  using V = typename T::V;
  const V xc = T::min(T::max(x, T::set1(-103.972084f)), T::set1(88.72283935f));
  V n;
  const V p = exp_reduced<T>(xc, n);
  V e = T::ldexp(p, n);  // n is in [-150, 128]
  e = T::select(T::lt(T::set1(88.72283935f), x), T::set1(__builtin_inff()), e);
  e = T::select(T::lt(x, T::set1(-103.972084f)), T::zero(), e);
  return T::select(T::is_nan(x), x, e);
}

// e^(kSign y) as p * 2^n, returned as p with 2^n in pow2n, in few vector operations: n =
// round(kSign y log2 e) and r = kSign y - n ln2 (|r| <= ln2 / 2; one-constant reduction: at most
// 2.4e-7 off where |n| is largest), e^r by a degree-5 polynomial fitted for relative error
// (9.5e-8). Adding 1.5 * 2^23 + 127 rounds kSign y log2 e to an integer and leaves n + 127 in the
// low mantissa bits: shifted into the exponent field they are 2^n. Valid for kSign y in [-87.3,
// 88]: n + 127 in [0, 254] (+0 at 0); callers clamp or mask the lanes outside. NaN stays NaN.
//
// With a table of 2^(k/16) (T::kExpTable16: AVX-512's 16-lane permute), n counts sixteenths: |r| <=
// ln2 / 32, and a degree-3 polynomial is within 1e-8; the table's entries are rounded floats (3e-8
// relative). Three fewer FMAs a vector than the form below, which is most of SiLU's cost on a core
// with one 512-bit FMA a cycle. The same reduction error (ln2 / 16 is ln2's float scaled exactly).
template <class T, int kSign>
inline __attribute__((always_inline)) typename T::V exp_parts(typename T::V y,
                                                              typename T::V& pow2n) {
  using V = typename T::V;
  static_assert(kSign == 1 || kSign == -1);
  constexpr float s = static_cast<float>(kSign);
  if constexpr (T::kExpTable16) {
    const V magic = T::set1(12584944.0f);  // 1.5 * 2^23 + 127 * 16
    const V t = T::fmadd(y, T::set1(s * 16.0f * 1.44269504088896341f), magic);
    const V n = T::sub(t, magic);                                          // sixteenths
    const V u = T::fmadd(n, T::set1(-s * 0.693147180559945f / 16.0f), y);  // r = kSign u
    V p = T::fmadd(T::set1(s * (1.0f / 6.0f)), u, T::set1(0.5f));
    p = T::fmadd(p, u, T::set1(s));
    pow2n = T::pow2_sixteenths(t);
    return T::fmadd(p, u, T::set1(1.0f));
  }
  const V magic = T::set1(12583039.0f);  // 1.5 * 2^23 + 127
  const V t = T::fmadd(y, T::set1(s * 1.44269504088896341f), magic);
  const V n = T::sub(t, magic);
  const V u = T::fmadd(n, T::set1(-s * 0.693147180559945f), y);  // r = kSign u
  V p = T::set1(s * 8.290315047e-3f);                            // sum c_i (kSign u)^i
  p = T::fmadd(p, u, T::set1(4.189793020e-2f));
  p = T::fmadd(p, u, T::set1(s * 1.666763574e-1f));
  p = T::fmadd(p, u, T::set1(4.999915063e-1f));
  p = T::fmadd(p, u, T::set1(s * 9.999997020e-1f));
  pow2n = T::exponent_from_low_bits(t);
  return T::fmadd(p, u, T::set1(1.0f));
}

// e^x for x <= 88 (softmax's x - max, GELU's -z^2): exp_parts, with 0 below -87.3 (e^x is then
// under the smallest normal float, which the kernels flush anyway) and for -inf. About half of
// exp_v's operations; larger x give arbitrary values.
template <class T>
inline __attribute__((always_inline)) typename T::V exp_upto88_v(typename T::V x) {
  typename T::V pow2n;
  const typename T::V p = exp_parts<T, 1>(x, pow2n);
  return T::zero_where(T::lt(x, T::set1(-87.3f)), T::mul(p, pow2n));
}

// 1 / (1 + exp(-x)) in few vector operations: SiLU (x sigmoid(x)), EfficientNet's and YOLOv8's
// activation, took 15% of EfficientNet-B0's run with exp_v's form and a division (0.95 of 6.3 ms
// on Zen 4, against the same engine without it; 0.76 ms with this one). exp(-x) by exp_parts, the
// reciprocal as rcp and one Newton step. From -88.3 to 88 (x is clamped above) 1 + exp(-x) is
// finite; below -88.3, whatever the lanes hold, the sigmoid is set to 0, so SiLU(-inf) = -inf * 0
// = NaN as in the reference. The clamp keeps a NaN x (min returns its second operand on NaN).
// Within 5 ulp of the reference for |x| < 20 (about 8 at the edges, on values of 1e-37).
template <class T>
inline __attribute__((always_inline)) typename T::V sigmoid_v(typename T::V x) {
  using V = typename T::V;
  constexpr float kLo = -88.3f;
  V pow2n;
  const V p = exp_parts<T, -1>(T::min(T::set1(88.0f), x), pow2n);
  const V d = T::fmadd(p, pow2n, T::set1(1.0f));
  return T::zero_where(T::lt(x, T::set1(kLo)), T::recip(d));
}

// tanh: a Taylor polynomial below |x| = 0.5 (where 1 - 2 / (e^2x + 1) would cancel), that form
// above.
template <class T>
typename T::V tanh_v(typename T::V x) {
  using V = typename T::V;
  const V ax = T::abs(x);
  const V x2 = T::mul(x, x);
  V p = T::set1(21844.0f / 6081075.0f);
  p = T::fmadd(p, x2, T::set1(-1382.0f / 155925.0f));
  p = T::fmadd(p, x2, T::set1(62.0f / 2835.0f));
  p = T::fmadd(p, x2, T::set1(-17.0f / 315.0f));
  p = T::fmadd(p, x2, T::set1(2.0f / 15.0f));
  p = T::fmadd(p, x2, T::set1(-1.0f / 3.0f));
  const V small = T::fmadd(T::mul(p, x2), x, x);
  const V e = exp_v<T>(T::add(ax, ax));
  const V big = T::sub(T::set1(1.0f), T::div(T::set1(2.0f), T::add(e, T::set1(1.0f))));
  const V r = T::select(T::lt(ax, T::set1(0.5f)), small, T::xor_sign(big, x));
  return T::select(T::is_nan(x), x, r);
}

// 0.5 x (1 + erf(x / sqrt 2)), with 1 + erf(-z) computed as erfc(z) so that it does not cancel;
// erfc(z) = t P(t) e^-z^2 with t = 1 / (1 + 0.3275911 z) (Abramowitz and Stegun 7.1.26). z is
// clamped to 10 (erfc is 0 in float from 9.2) so that t's reciprocal stays finite, and e^-z^2 is 0
// past z^2 = 87.3: GELU(-inf) = -inf * 0 = NaN as in the reference. A NaN x stays NaN.
template <class T>
inline __attribute__((always_inline)) typename T::V gelu_v(typename T::V x) {
  using V = typename T::V;
  const V z = T::min(T::set1(10.0f), T::mul(T::abs(x), T::set1(0.70710678118654752f)));
  const V t = T::recip(T::fmadd(z, T::set1(0.3275911f), T::set1(1.0f)));
  V p = T::set1(1.061405429f);
  p = T::fmadd(p, t, T::set1(-1.453152027f));
  p = T::fmadd(p, t, T::set1(1.421413741f));
  p = T::fmadd(p, t, T::set1(-0.284496736f));
  p = T::fmadd(p, t, T::set1(0.254829592f));
  const V z2 = T::mul(z, z);
  V pow2n;
  const V q = exp_parts<T, -1>(z2, pow2n);
  const V e = T::zero_where(T::lt(T::set1(87.3f), z2), T::mul(q, pow2n));
  const V erfc = T::mul(T::mul(p, t), e);
  const V one_plus_erf = T::select(T::lt(x, T::zero()), erfc, T::sub(T::set1(2.0f), erfc));
  return T::mul(T::mul(T::set1(0.5f), x), one_plus_erf);
}

// The activations cheap enough to inline in every store loop (none, ReLU, Clip) applied to x;
// false, x unchanged, for the others.
template <class T>
inline __attribute__((always_inline)) bool activate_simple_v(const Epilogue& ep, typename T::V& x) {
  switch (ep.act) {
    case Act::kNone:
      return true;
    case Act::kRelu:
      x = T::max(T::zero(), x);
      return true;
    case Act::kClip:  // max(lo, x) keeps a NaN x (x86 max returns its second operand on NaN)
      x = T::min(T::set1(ep.act_beta), T::max(T::set1(ep.act_alpha), x));
      return true;
    default:
      return false;
  }
}

template <class T>
typename T::V activate_v(const Epilogue& ep, typename T::V x) {
  using V = typename T::V;
  if (activate_simple_v<T>(ep, x)) return x;
  switch (ep.act) {
    case Act::kLeakyRelu:
      return T::select(T::lt(x, T::zero()), T::mul(x, T::set1(ep.act_alpha)), x);
    case Act::kSigmoid:
      return sigmoid_v<T>(x);
    case Act::kSilu:
      return T::mul(x, sigmoid_v<T>(x));
    case Act::kHardSwish: {
      const V h = T::fmadd(x, T::set1(1.0f / 6.0f), T::set1(0.5f));
      return T::mul(x, T::min(T::set1(1.0f), T::max(T::zero(), h)));
    }
    case Act::kHardSigmoid: {
      const V h = T::fmadd(x, T::set1(ep.act_alpha), T::set1(ep.act_beta));
      return T::min(T::set1(1.0f), T::max(T::zero(), h));
    }
    case Act::kGelu:
      return gelu_v<T>(x);
    case Act::kTanh:
      return tanh_v<T>(x);
    default:  // the simple ones, applied above
      break;
  }
  return x;
}

// The epilogue of one vector of output row `row`, columns [col, col + lanes) but the activation:
// scale, biases, addend.
template <class T>
inline __attribute__((always_inline)) typename T::V finish_linear_v(const Epilogue& ep,
                                                                    typename T::V x, int64_t row,
                                                                    int64_t col, int lanes) {
  if (ep.alpha != 1.0f) x = T::mul(x, T::set1(ep.alpha));
  if (ep.row_bias != nullptr) x = T::add(x, T::set1(ep.row_bias[row]));
  if (ep.col_bias != nullptr) {
    x = T::add(
        x, lanes == T::kLanes ? T::loadu(ep.col_bias + col) : T::load_n(ep.col_bias + col, lanes));
  }
  if (ep.addend != nullptr) {
    const float* a = ep.addend + row * ep.addend_rs;
    const typename T::V v = ep.addend_cs == 0    ? T::set1(a[0])
                            : lanes == T::kLanes ? T::loadu(a + col)
                                                 : T::load_n(a + col, lanes);
    x = T::fmadd(v, T::set1(ep.addend_scale), x);
  }
  return x;
}

// The whole epilogue of one vector (finish_linear_v, then the activation). Inlined into the
// kernels' store loops, with the common activations (none, ReLU, Clip: MobileNet's ReLU6) in line
// and the others called: as a call for every output vector it took 6% of MobileNetV2.
template <class T>
inline __attribute__((always_inline)) typename T::V finish_v(const Epilogue& ep, typename T::V x,
                                                             int64_t row, int64_t col, int lanes) {
  x = finish_linear_v<T>(ep, x, row, col, lanes);
  return activate_simple_v<T>(ep, x) ? x : activate_v<T>(ep, x);
}

// The activation of N vectors, chosen once. Sigmoid and SiLU (EfficientNet's) are inlined, N
// independent chains of some twenty dependent operations that the core overlaps: called one vector
// at a time they cost 3 cycles an element, 2.5x ONNX Runtime's separate SiLU pass.
template <class T, int N>
inline __attribute__((always_inline)) void activate_n(const Epilogue& ep, typename T::V* x) {
  switch (ep.act) {
    // The simple ones in their own loops: in the default case below, the possible call of
    // activate_v made GCC spill the N accumulators around it (a tenth of a plain stem's tile).
    case Act::kNone:
      return;
    case Act::kRelu:
#pragma GCC unroll 48
      for (int i = 0; i < N; ++i) x[i] = T::max(T::zero(), x[i]);
      return;
    case Act::kClip: {
      const typename T::V lo = T::set1(ep.act_alpha), hi = T::set1(ep.act_beta);
#pragma GCC unroll 48
      for (int i = 0; i < N; ++i) x[i] = T::min(hi, T::max(lo, x[i]));
      return;
    }
    case Act::kSigmoid:
#pragma GCC unroll 16
      for (int i = 0; i < N; ++i) x[i] = sigmoid_v<T>(x[i]);
      return;
    case Act::kSilu:
#pragma GCC unroll 16
      for (int i = 0; i < N; ++i) x[i] = T::mul(x[i], sigmoid_v<T>(x[i]));
      return;
    case Act::kGelu:
#pragma GCC unroll 16
      for (int i = 0; i < N; ++i) x[i] = gelu_v<T>(x[i]);
      return;
    default:
#pragma GCC unroll 16
      for (int i = 0; i < N; ++i) {
        if (!activate_simple_v<T>(ep, x[i])) x[i] = activate_v<T>(ep, x[i]);
      }
  }
}

// y = the activation of x, n floats (x may be y): a standalone activation op (YOLOv8's Sigmoid of
// its class scores), four vectors at a time so that their chains overlap.
template <class T>
void activate_array(const Epilogue& ep, const float* x, float* y, int64_t n) {
  using V = typename T::V;
  constexpr int64_t kL = T::kLanes;
  int64_t i = 0;
  for (; i + 4 * kL <= n; i += 4 * kL) {
    V v[4];
    for (int k = 0; k < 4; ++k) v[k] = T::loadu(x + i + k * kL);
    activate_n<T, 4>(ep, v);
    for (int k = 0; k < 4; ++k) T::storeu(y + i + k * kL, v[k]);
  }
  for (; i < n; i += kL) {
    const int lanes = static_cast<int>(n - i < kL ? n - i : kL);
    V v[1] = {T::load_n(x + i, lanes)};
    activate_n<T, 1>(ep, v);
    T::store_n(y + i, v[0], lanes);
  }
}
