#pragma once
// The depthwise convolution behind kernels.h over a vector-traits type T. Included after
// kernels_impl.h by each ISA's translation unit; anonymous namespace as there.
//
// Vectors run over the output plane as if it were one long row: output pixel (oh, ow) is lane
// q = oh * wq + ow of a "wide" grid whose rows are as long as a phase plane's (below), so every
// tap of the window is one unaligned load at a fixed offset from q, whatever the row length. A
// row-by-row kernel fills 7 of 16 lanes on a 7x7 plane; the wide grid fills 49 of 64 (the lanes
// past out_w of each row are computed and dropped: the store compresses them out).
//
// Strides are taken out of the loads by splitting the zero-padded input plane into stride_h x
// stride_w phase planes (phase (a, b) holds padded pixels (a + i * stride_h, b + j * stride_w)):
// tap (kh, kw) of output (oh, ow) reads phase ((kh * dil_h) % stride_h, (kw * dil_w) % stride_w)
// at row oh + kh * dil_h / stride_h and column ow + kw * dil_w / stride_w, so at q plus a constant.
// A stride-2 layer pays one de-interleave per input element instead of a permute per tap.

#include <bit>
#include <cstring>
#include <utility>

#include "kernels/x86/kernels_impl.h"

namespace kiln::kernels::x86 {
namespace {

// The phase planes of one input channel. Each data row is written with whole-vector stores whose
// lanes past the row's data are zero (masked loads): they land on the row's right padding, the
// next row's left padding and data (written after), or the slack, so every float the planes
// hold is data or zero and the padding zeroed once serves every channel. (A masked store would
// keep the padding too, but the loads that follow could not be forwarded from it.)
template <class T>
void fill_phase_planes(const DepthwisePlan& pl, const float* src, float* planes) {
  constexpr int64_t kL = T::kLanes;
  const cpu::Conv2DParams& p = pl.p;
  const int64_t sh = p.stride_h, sw = p.stride_w;
  int64_t a = p.pad_top % sh, i = p.pad_top / sh;  // the padded row's phase and row there
  for (int64_t ih = 0; ih < p.in_h; ++ih, a = a + 1 == sh ? 0 : a + 1, i += a == 0 ? 1 : 0) {
    const float* s = src + ih * p.in_w;
    float* row = planes + a * sw * pl.phase_floats + i * pl.wq;
    if (sw == 1) {
      float* d = row + p.pad_left;
      for (int64_t j = 0; j < p.in_w; j += kL) {
        const int n = static_cast<int>(min64(kL, p.in_w - j));
        T::storeu(d + j, n == kL ? T::loadu(s + j) : T::load_n(s + j, n));
      }
    } else if (sw == 2) {
      // Input columns 2m go to column phase pad_left % 2, columns 2m + 1 to the other one.
      float* even_d = row + (p.pad_left % 2) * pl.phase_floats + p.pad_left / 2;
      float* odd_d = row + ((p.pad_left + 1) % 2) * pl.phase_floats + (p.pad_left + 1) / 2;
      for (int64_t j = 0; j < p.in_w; j += 2 * kL) {
        const int64_t n = min64(2 * kL, p.in_w - j);
        const typename T::V lo = n >= kL ? T::loadu(s + j) : T::load_n(s + j, static_cast<int>(n));
        const typename T::V hi = n == 2 * kL ? T::loadu(s + j + kL)
                                 : n > kL    ? T::load_n(s + j + kL, static_cast<int>(n - kL))
                                             : T::zero();
        T::storeu(even_d + j / 2, T::even(lo, hi));
        T::storeu(odd_d + j / 2, T::odd(lo, hi));
      }
    } else {  // rare: element by element, no zero tails
      for (int64_t iw = 0; iw < p.in_w; ++iw) {
        const int64_t c = iw + p.pad_left;
        row[(c % sw) * pl.phase_floats + c / sw] = s[iw];
      }
    }
  }
}

// What the plane loop reads of the plan, copied out of it: Y's stores may alias anything the plan
// points to as far as the compiler knows, so values read through the plan would be reloaded after
// every store.
struct DepthwiseGrid {
  const int64_t* taps;
  const int64_t* rows;
  const uint32_t* masks;
  int64_t vectors, tap_count, phase_floats;
};

// U vectors of the wide grid from vector v0 on. NT: the window's tap count when known at
// compile time (9: 3x3, 25: 5x5), so that the tap loop unrolls; 0 reads it from the grid.
template <class T, int U, int NT>
inline __attribute__((always_inline)) void depthwise_block(const DepthwiseGrid& g,
                                                           const float* planes, const float* wk,
                                                           int64_t v0, typename T::V* acc) {
  constexpr int64_t kL = T::kLanes;
  const int64_t taps = NT != 0 ? NT : g.tap_count;
  const float* base = planes + v0 * kL;
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) acc[u] = T::zero();
#pragma GCC unroll 25
  for (int64_t t = 0; t < taps; ++t) {
    const typename T::V w = T::set1(wk[t]);
    const float* s = base + g.taps[t];
#pragma GCC unroll 8
    for (int u = 0; u < U; ++u) acc[u] = T::fmadd(w, T::loadu(s + u * kL), acc[u]);
  }
}

// The same U vectors with the window's columns taken from registers (AVX-512): per window row
// and column phase, U + 1 loads serve every tap of the row, each later tap's operand shifted in
// from the next vector (alignr) instead of loaded again. A 3x3 stride-1 window: 27 loads for 8
// vectors, not 72, and those were unaligned (two of three crossed a cache line).
template <class T, int U, int J>
inline __attribute__((always_inline)) void shifted_fmadd(const typename T::V* l, typename T::V w,
                                                         typename T::V* acc) {
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) {
    if constexpr (J == 0) {
      acc[u] = T::fmadd(w, l[u], acc[u]);
    } else {
      acc[u] = T::fmadd(w, T::template alignr<J>(l[u + 1], l[u]), acc[u]);
    }
  }
}

// Column phase B of one window row (stride SW): taps kw = B, B + SW, ... at shifts 0, 1, ...
template <class T, int U, int K, int SW, int B>
inline __attribute__((always_inline)) void depthwise_row_phase(const float* s, const float* wrow,
                                                               typename T::V* acc) {
  constexpr int kShifts = (K - B + SW - 1) / SW;
  typename T::V l[U + 1];
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) l[u] = T::loadu(s + u * T::kLanes);
  if constexpr (kShifts > 1) l[U] = T::loadu(s + U * T::kLanes);
  [&]<int... J>(std::integer_sequence<int, J...>) {
    (shifted_fmadd<T, U, J>(l, T::set1(wrow[B + J * SW]), acc), ...);
  }
  (std::make_integer_sequence<int, kShifts>{});
}

template <class T, int U, int K, int SW>
inline __attribute__((always_inline)) void depthwise_rows_block(const DepthwiseGrid& g,
                                                                const float* planes,
                                                                const float* wk, int64_t v0,
                                                                typename T::V* acc) {
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) acc[u] = T::zero();
  const float* base = planes + v0 * T::kLanes;
#pragma GCC unroll 5
  for (int kh = 0; kh < K; ++kh) {
    depthwise_row_phase<T, U, K, SW, 0>(base + g.rows[kh], wk + kh * K, acc);
    if constexpr (SW == 2) {
      depthwise_row_phase<T, U, K, SW, 1>(base + g.rows[kh] + g.phase_floats, wk + kh * K, acc);
    }
  }
}

// How a block of U vectors gathers its taps: one load per tap (any window), or row shifts
// (square 3x3 and 5x5 windows, column stride 1, or 2 for 5x5; no column dilation; AVX-512).
template <class T, int NT>
struct TapLoads {
  template <int U>
  static void block(const DepthwiseGrid& g, const float* planes, const float* wk, int64_t v0,
                    typename T::V* acc) {
    depthwise_block<T, U, NT>(g, planes, wk, v0, acc);
  }
};

template <class T, int K, int SW>
struct RowShifts {
  template <int U>
  static void block(const DepthwiseGrid& g, const float* planes, const float* wk, int64_t v0,
                    typename T::V* acc) {
    depthwise_rows_block<T, U, K, SW>(g, planes, wk, v0, acc);
  }
};

// The output pixels among U wide vectors, compressed to Y's order (from pixel *o on), through
// the epilogue (the activation for all U at once: see activate_n).
template <class T, int U>
inline __attribute__((always_inline)) void depthwise_store(const DepthwiseGrid& g,
                                                           const Epilogue& e, int64_t oc,
                                                           int64_t v0, const typename T::V* acc,
                                                           float* yo, int64_t* o) {
  constexpr int kL = T::kLanes;
  typename T::V v[U];
  int n[U];
  int64_t at = *o;
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) {
    const uint32_t mask = g.masks[v0 + u];
    n[u] = std::popcount(mask);
    v[u] = finish_linear_v<T>(e, T::compress(acc[u], mask), oc, at, n[u]);
    at += n[u];
  }
  activate_n<T, U>(e, v);
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) {
    if (n[u] == kL) {
      T::storeu(yo + *o, v[u]);
    } else {
      T::store_n(yo + *o, v[u], n[u]);
    }
    *o += n[u];
  }
}

template <class T, int U, class Taps>
inline __attribute__((always_inline)) void depthwise_step(const DepthwiseGrid& g,
                                                          const float* planes, const float* wk,
                                                          const Epilogue& e, int64_t oc, int64_t v0,
                                                          float* yo, int64_t* o) {
  typename T::V acc[U];
  Taps::template block<U>(g, planes, wk, v0, acc);
  depthwise_store<T, U>(g, e, oc, v0, acc, yo, o);
}

// One output plane: eight vectors at a time (independent accumulators hide the FMA latency),
// then the remainder in fewer. The grid and epilogue come by value (see DepthwiseGrid).
template <class T, class Taps>
void depthwise_plane(const DepthwiseGrid g, const float* planes, const float* wk, const Epilogue e,
                     int64_t oc, float* yo) {
  int64_t o = 0, v = 0;
  for (; v + 8 <= g.vectors; v += 8) depthwise_step<T, 8, Taps>(g, planes, wk, e, oc, v, yo, &o);
  if (v + 4 <= g.vectors) {
    depthwise_step<T, 4, Taps>(g, planes, wk, e, oc, v, yo, &o);
    v += 4;
  }
  if (v + 2 <= g.vectors) {
    depthwise_step<T, 2, Taps>(g, planes, wk, e, oc, v, yo, &o);
    v += 2;
  }
  if (v < g.vectors) depthwise_step<T, 1, Taps>(g, planes, wk, e, oc, v, yo, &o);
}

using DepthwisePlaneFn = void (*)(DepthwiseGrid, const float*, const float*, Epilogue, int64_t,
                                  float*);

template <class T>
DepthwisePlaneFn pick_depthwise_plane(const DepthwisePlan& pl) {
  const cpu::Conv2DParams& p = pl.p;
  if constexpr (T::kAlignr) {
    if (p.k_h == p.k_w && p.dil_w == 1 && (p.k_w == 3 || p.k_w == 5)) {
      if (p.stride_w == 1) {
        return p.k_w == 3 ? &depthwise_plane<T, RowShifts<T, 3, 1>>
                          : &depthwise_plane<T, RowShifts<T, 5, 1>>;
      }
      // 3x3 stride 2 saves 3 loads of 9 per vector and measured no faster (slower on 28x28
      // planes in MobileNetV2); 5x5 stride 2 saves 13 of 25.
      if (p.stride_w == 2 && p.k_w == 5) return &depthwise_plane<T, RowShifts<T, 5, 2>>;
    }
  }
  // EfficientNet's 5x5 layers: with the tap count unknown the tap loop stays a loop.
  if (pl.taps.size() == 9) return &depthwise_plane<T, TapLoads<T, 9>>;
  if (pl.taps.size() == 25) return &depthwise_plane<T, TapLoads<T, 25>>;
  return &depthwise_plane<T, TapLoads<T, 0>>;
}

// Tasks are output planes. Two sets of phase planes alternate: the next channel's are filled
// before the current one is computed, so its loads never wait on stores just issued.
template <class T>
void depthwise_tasks(const DepthwisePlan& pl, const float* x, const float* w, const Epilogue& ep,
                     float* y, float* scratch, int64_t begin, int64_t end) {
  const FlushDenormals ftz;
  const cpu::Conv2DParams& p = pl.p;
  const int64_t mult = p.out_c / p.in_c;
  const int64_t n = p.out_h * p.out_w;
  const int64_t set_floats = p.stride_h * p.stride_w * pl.phase_floats;
  std::memset(scratch, 0, 2 * static_cast<size_t>(set_floats) * sizeof(float));
  const DepthwisePlaneFn plane_fn = pick_depthwise_plane<T>(pl);
  const DepthwiseGrid grid{pl.taps.data(),
                           pl.rows.data(),
                           pl.masks.data(),
                           pl.vectors,
                           static_cast<int64_t>(pl.taps.size()),
                           pl.phase_floats};
  auto channel_of = [&](int64_t t) { return (t / p.out_c) * p.in_c + (t % p.out_c) / mult; };
  int cur = 0;
  int64_t filled[2] = {-1, -1};
  for (int64_t t = begin; t < end; ++t) {
    const int64_t channel = channel_of(t);
    if (filled[cur] != channel) {
      fill_phase_planes<T>(pl, x + channel * p.in_h * p.in_w, scratch + cur * set_floats);
      filled[cur] = channel;
    }
    const int64_t next = t + 1 < end ? channel_of(t + 1) : channel;
    if (next != channel) {
      fill_phase_planes<T>(pl, x + next * p.in_h * p.in_w, scratch + (cur ^ 1) * set_floats);
      filled[cur ^ 1] = next;
    }
    const int64_t oc = t % p.out_c, b = t / p.out_c;
    Epilogue e = ep;
    if (e.addend != nullptr) e.addend += b * p.out_c * e.addend_rs;
    plane_fn(grid, scratch + cur * set_floats, w + oc * p.k_h * p.k_w, e, oc,
             y + (b * p.out_c + oc) * n);
    if (next != channel) cur ^= 1;
  }
}

}  // namespace
}  // namespace kiln::kernels::x86
