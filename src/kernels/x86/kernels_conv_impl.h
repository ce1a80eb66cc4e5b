#pragma once
// The convolutions behind kernels.h over a vector-traits type T: the implicit-GEMM convolution
// (patches packed straight into the microkernel's B panels) and the depthwise convolution.
// Included after kernels_impl.h by each ISA's translation unit; anonymous namespace as there.

#include "kernels/x86/kernels_impl.h"

namespace kiln::kernels::x86 {
namespace {

// The input and output geometry the patch packer walks. A "flat" plan (1x1, stride 1, no pad)
// sees each channel as one row of H*W pixels, so a panel is one contiguous copy.
struct PatchGeom {
  int64_t in_h, in_w, out_w, k_h, k_w, s_h, s_w, d_h, d_w, pad_t, pad_l;
};

inline PatchGeom patch_geom(const ConvGemmPlan& pl) {
  const cpu::Conv2DParams& p = pl.p;
  if (pl.flat) return {1, p.in_h * p.in_w, pl.n, 1, 1, 1, 1, 1, 1, 0, 0};
  return {p.in_h,     p.in_w,  p.out_w, p.k_h,     p.k_w,     p.stride_h,
          p.stride_w, p.dil_h, p.dil_w, p.pad_top, p.pad_left};
}

// dst[0, len) = row[iw0 + q] for q < len, zero where iw0 + q is outside [0, w).
template <class T>
void copy_row_segment(const float* row, int64_t iw0, int64_t w, float* dst, int64_t len) {
  constexpr int64_t kL = T::kLanes;
  if (iw0 >= 0 && iw0 + len <= w) {  // the usual case: the run is inside the row
    const float* src = row + iw0;
    int64_t q = 0;
    for (; q + kL <= len; q += kL) T::storeu(dst + q, T::loadu(src + q));
    if (q < len) {
      const int n = static_cast<int>(len - q);
      T::store_n(dst + q, T::load_n(src + q, n), n);
    }
    return;
  }
  for (int64_t q = 0; q < len; q += kL) {
    const int64_t cnt = min64(kL, len - q);
    const int64_t lo = min64(max64(-(iw0 + q), 0), cnt);
    const int64_t hi = max64(min64(w - (iw0 + q), cnt), lo);
    typename T::V v;
    if (lo == 0 && hi == kL) {
      v = T::loadu(row + iw0 + q);
    } else if (lo == hi) {
      v = T::zero();
    } else {
      v = T::load_range(row + iw0 + q, static_cast<int>(lo), static_cast<int>(hi));
    }
    if (cnt == kL) {
      T::storeu(dst + q, v);
    } else {
      T::store_n(dst + q, v, static_cast<int>(cnt));
    }
  }
}

// The floats of [at, at + kL) that lie in [0, w), as a load_range of row + at.
template <class T>
typename T::V load_row_lanes(const float* row, int64_t at, int64_t w) {
  constexpr int64_t kL = T::kLanes;
  const int64_t lo = min64(max64(-at, 0), kL);
  const int64_t hi = max64(min64(w - at, kL), lo);
  if (lo == 0 && hi == kL) return T::loadu(row + at);
  if (lo == hi) return T::zero();
  return T::load_range(row + at, static_cast<int>(lo), static_cast<int>(hi));
}

// dst[0, len) = row[iw0 + 2q], zero outside [0, w): two vectors of the row, even lanes kept.
template <class T>
void copy_row_segment_s2(const float* row, int64_t iw0, int64_t w, float* dst, int64_t len) {
  constexpr int64_t kL = T::kLanes;
  for (int64_t q = 0; q < len; q += kL) {
    const int64_t at = iw0 + 2 * q;
    const typename T::V v =
        T::even(load_row_lanes<T>(row, at, w), load_row_lanes<T>(row, at + kL, w));
    if (q + kL <= len) {
      T::storeu(dst + q, v);
    } else {
      T::store_n(dst + q, v, static_cast<int>(len - q));
    }
  }
}

// One B panel: patch rows [k0, k0 + kc) x output pixels [n0, n0 + cols) of one image and group
// (xg: its first input channel), NR floats per row, columns past `cols` zero. The panel's pixels
// are split once into runs within one output row; each patch row then copies each run.
template <class T>
void pack_patch_panel(const PatchGeom& g, const float* xg, int64_t k0, int64_t kc, int64_t n0,
                      int64_t cols, float* dst) {
  constexpr int64_t kNr = T::kNv * T::kLanes;
  struct Run {
    int64_t at, len, oh, ow;
  };
  Run runs[kNr];
  int nruns = 0;
  for (int64_t t = 0, oh = n0 / g.out_w, ow = n0 % g.out_w; t < cols; ++oh, ow = 0) {
    const int64_t len = min64(cols - t, g.out_w - ow);
    runs[nruns++] = Run{t, len, oh, ow};
    t += len;
  }
  const int64_t khw = g.k_h * g.k_w;
  int64_t c = k0 / khw, kh = (k0 % khw) / g.k_w, kw = k0 % g.k_w;
  for (int64_t p = 0; p < kc; ++p, dst += kNr) {
    const float* xc = xg + c * g.in_h * g.in_w;
    for (int i = 0; i < nruns; ++i) {
      const Run& r = runs[i];
      float* d = dst + r.at;
      const int64_t ih = r.oh * g.s_h - g.pad_t + kh * g.d_h;
      const int64_t iw0 = r.ow * g.s_w - g.pad_l + kw * g.d_w;
      if (ih < 0 || ih >= g.in_h) {
        std::memset(d, 0, static_cast<size_t>(r.len) * sizeof(float));
      } else if (g.s_w == 1) {
        copy_row_segment<T>(xc + ih * g.in_w, iw0, g.in_w, d, r.len);
      } else if (g.s_w == 2) {
        copy_row_segment_s2<T>(xc + ih * g.in_w, iw0, g.in_w, d, r.len);
      } else {
        const float* row = xc + ih * g.in_w;
        for (int64_t q = 0; q < r.len; ++q) {
          const int64_t iw = iw0 + q * g.s_w;
          d[q] = iw >= 0 && iw < g.in_w ? row[iw] : 0.0f;
        }
      }
    }
    if (cols < kNr) std::memset(dst + cols, 0, static_cast<size_t>(kNr - cols) * sizeof(float));
    if (++kw == g.k_w) {
      kw = 0;
      if (++kh == g.k_h) {
        kh = 0;
        ++c;
      }
    }
  }
}

// A flat (1x1, stride 1, unpadded) B block: channels [k0, k0 + kc) x pixels [n0, n0 + cols) into
// consecutive NR-column panels (panel stride kc * NR). Each channel's pixels are copied in one
// pass, a contiguous stream, instead of a few cache lines of every channel per panel: with
// hundreds of channels the latter defeats the hardware prefetchers.
template <class T>
void pack_flat_block(const float* xg, int64_t hw, int64_t k0, int64_t kc, int64_t n0, int64_t cols,
                     float* dst) {
  constexpr int64_t kNr = T::kNv * T::kLanes;
  for (int64_t p = 0; p < kc; ++p) {
    const float* src = xg + (k0 + p) * hw + n0;
    float* d = dst + p * kNr;
    for (int64_t j = 0; j < cols; j += kNr, d += kc * kNr) {
      const int64_t w = min64(kNr, cols - j);
      copy_row_segment<T>(src + j, 0, w, d, w);
      if (w < kNr) std::memset(d + w, 0, static_cast<size_t>(kNr - w) * sizeof(float));
    }
  }
}

// Weights [out_c, Cg * kh * kw] per group into MR-row panels over the whole depth.
template <class T>
void conv_pack_weights_impl(const cpu::Conv2DParams& p, const float* w, float* packed) {
  const int64_t mg = p.out_c / p.group;
  const int64_t kdim = p.in_c / p.group * p.k_h * p.k_w;
  const int64_t panels = (mg + T::kMr - 1) / T::kMr;
  for (int64_t g = 0; g < p.group; ++g) {
    pack_a_panels<T>(w + g * mg * kdim, kdim, 1, mg, 0, kdim, packed + g * panels * kdim * T::kMr);
  }
}

// A task is one (image, group, pixel block, channel block); per depth block and column panel the
// patches are packed into this thread's scratch (L1) and every weight panel runs against them.
template <class T>
void conv_gemm_tasks(const ConvGemmPlan& pl, const float* x, const float* packed_w,
                     const Epilogue& ep, float* y, float* scratch, int64_t begin, int64_t end) {
  constexpr int64_t kMr = T::kMr;
  constexpr int64_t kNr = T::kNv * T::kLanes;
  const FlushDenormals ftz;
  const cpu::Conv2DParams& p = pl.p;
  const PatchGeom geom = patch_geom(pl);
  const int64_t cg = p.in_c / p.group;
  const int64_t w_group = (pl.mg + kMr - 1) / kMr * pl.kdim * kMr;
  for (int64_t t = begin; t < end; ++t) {
    const int64_t mb = t % pl.m_blocks;
    const int64_t nb = (t / pl.m_blocks) % pl.n_blocks;
    const int64_t g = (t / (pl.m_blocks * pl.n_blocks)) % p.group;
    const int64_t b = t / (pl.m_blocks * pl.n_blocks * p.group);
    const int64_t m0 = mb * pl.mc, n0 = nb * pl.nc;
    const int64_t rows = min64(pl.mc, pl.mg - m0), cols = min64(pl.nc, pl.n - n0);
    const float* xg = x + (b * p.in_c + g * cg) * p.in_h * p.in_w;
    float* yg = y + (b * p.out_c + g * pl.mg) * pl.n;
    Epilogue e = ep;
    if (e.row_bias != nullptr) e.row_bias += g * pl.mg;
    if (e.addend != nullptr) e.addend += (b * p.out_c + g * pl.mg) * e.addend_rs;
    const float* wg = packed_w + g * w_group + (m0 / kMr) * pl.kdim * kMr;
    if (pl.flat) {  // per column sub-block: per depth step, pack the block, run its panels
      for (int64_t j0 = 0; j0 < cols; j0 += pl.flat_cols) {
        const int64_t jw = min64(pl.flat_cols, cols - j0);
        for (int64_t k0 = 0; k0 == 0 || k0 < pl.kdim; k0 += pl.bl.kc) {
          const int64_t kc = min64(pl.bl.kc, pl.kdim - k0);
          pack_flat_block<T>(xg, pl.n, k0, kc, n0 + j0, jw, scratch);
          for (int64_t j = 0; j < jw; j += kNr) {
            column_panel<T>(kc, rows, min64(kNr, jw - j), wg + k0 * kMr, pl.kdim * kMr,
                            scratch + (j / kNr) * kc * kNr, yg + m0 * pl.n + n0 + j0 + j, pl.n,
                            k0 > 0, k0 + kc >= pl.kdim ? &e : nullptr, m0, n0 + j0 + j);
          }
        }
      }
      continue;
    }
    auto step = [&](int64_t k0, int64_t j) {
      const int64_t kc = min64(pl.bl.kc, pl.kdim - k0);
      const int64_t w = min64(kNr, cols - j);
      pack_patch_panel<T>(geom, xg, k0, kc, n0 + j, w, scratch);
      column_panel<T>(kc, rows, w, wg + k0 * kMr, pl.kdim * kMr, scratch, yg + m0 * pl.n + n0 + j,
                      pl.n, k0 > 0, k0 + kc >= pl.kdim ? &e : nullptr, m0, n0 + j);
    };
    if (pl.depth_inner) {  // a column panel's C tiles stay in L1 over the whole depth
      for (int64_t j = 0; j < cols; j += kNr) {
        for (int64_t k0 = 0; k0 == 0 || k0 < pl.kdim; k0 += pl.bl.kc) step(k0, j);
      }
    } else {  // the A block of a depth step stays in L2 over every column panel
      for (int64_t k0 = 0; k0 == 0 || k0 < pl.kdim; k0 += pl.bl.kc) {
        for (int64_t j = 0; j < cols; j += kNr) step(k0, j);
      }
    }
  }
}

// --- depthwise -----------------------------------------------------------------------------------

// The input plane into the interior of the padded plane [hp x wp], whose padding (and the slack
// the strided loads may read) the caller zeroed once: every channel's plane has the same. Rows
// are copied in vectors: three libc calls a row (two memsets and a memcpy, as this was) cost more
// than the copy on MobileNet's short rows (7% of the network).
template <class T>
void copy_plane_rows(const cpu::Conv2DParams& p, int64_t wp, const float* src, float* plane) {
  constexpr int64_t kL = T::kLanes;
  const int64_t full = p.in_w / kL * kL;
  const int tail = static_cast<int>(p.in_w - full);
  for (int64_t ih = 0; ih < p.in_h; ++ih) {
    const float* s = src + ih * p.in_w;
    float* d = plane + (ih + p.pad_top) * wp + p.pad_left;
    for (int64_t i = 0; i < full; i += kL) T::storeu(d + i, T::loadu(s + i));
    if (tail > 0) T::store_n(d + full, T::load_n(s + full, tail), tail);
  }
}

// One output row of one plane, `U` vectors of output columns at a time (independent
// accumulators hide the FMA latency). S is the column stride and K the kernel's extent when known
// at compile time (1 or 2, and 3x3 or 5x5: MobileNet's and EfficientNet's layers), 0 for "read p".
template <class T, int U, int S, int K>
int64_t depthwise_row_block(const cpu::Conv2DParams& p, int64_t wp, const float* plane,
                            const float* wk, int64_t oh, int64_t ow, typename T::V* acc) {
  constexpr int64_t kL = T::kLanes;
  const int64_t sw = S != 0 ? S : p.stride_w;
  const int64_t kh_n = K != 0 ? K : p.k_h, kw_n = K != 0 ? K : p.k_w;
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) acc[u] = T::zero();
#pragma GCC unroll 5
  for (int64_t kh = 0; kh < kh_n; ++kh) {
    const float* row = plane + (oh * p.stride_h + kh * p.dil_h) * wp + ow * sw;
#pragma GCC unroll 5
    for (int64_t kw = 0; kw < kw_n; ++kw) {
      const typename T::V wv = T::set1(wk[kh * kw_n + kw]);
      const float* src = row + kw * p.dil_w;
#pragma GCC unroll 4
      for (int u = 0; u < U; ++u) {
        const float* at = src + u * kL * sw;
        const typename T::V x = S == 1 ? T::loadu(at) : T::load_strided(at, sw);
        acc[u] = T::fmadd(wv, x, acc[u]);
      }
    }
  }
  return U * kL;
}

// A row block of up to four vectors, the widest that the row still needs.
template <class T, int S, int K>
int64_t depthwise_row(const cpu::Conv2DParams& p, int64_t wp, const float* plane, const float* wk,
                      int64_t oh, int64_t ow, typename T::V* acc) {
  const int64_t left = p.out_w - ow;
  if (left > 2 * T::kLanes) return depthwise_row_block<T, 4, S, K>(p, wp, plane, wk, oh, ow, acc);
  if (left > T::kLanes) return depthwise_row_block<T, 2, S, K>(p, wp, plane, wk, oh, ow, acc);
  return depthwise_row_block<T, 1, S, K>(p, wp, plane, wk, oh, ow, acc);
}

using DepthwiseRowFn = int64_t (*)(const cpu::Conv2DParams&, int64_t, const float*, const float*,
                                   int64_t, int64_t, void*);

template <class T, int S, int K>
int64_t depthwise_row_erased(const cpu::Conv2DParams& p, int64_t wp, const float* plane,
                             const float* wk, int64_t oh, int64_t ow, void* acc) {
  return depthwise_row<T, S, K>(p, wp, plane, wk, oh, ow, static_cast<typename T::V*>(acc));
}

template <class T, int S>
DepthwiseRowFn pick_depthwise_row_k(const cpu::Conv2DParams& p) {
  if (p.k_h == 3 && p.k_w == 3) return &depthwise_row_erased<T, S, 3>;
  // EfficientNet's 5x5 layers: with the extent unknown the tap loops stay loops (1.4x slower).
  if (p.k_h == 5 && p.k_w == 5) return &depthwise_row_erased<T, S, 5>;
  return &depthwise_row_erased<T, S, 0>;
}

template <class T>
DepthwiseRowFn pick_depthwise_row(const cpu::Conv2DParams& p) {
  if (p.stride_w == 1) return pick_depthwise_row_k<T, 1>(p);
  if (p.stride_w == 2) return pick_depthwise_row_k<T, 2>(p);
  return &depthwise_row_erased<T, 0, 0>;
}

// Output rows oh and oh + 1 of a 3x3 depthwise convolution with unit strides and no height
// dilation: the four input rows they share are loaded once (12 loads for 18 FMAs, not 18).
template <class T, int U>
void depthwise_pair_block(const cpu::Conv2DParams& p, int64_t wp, const float* plane,
                          const float* wk, int64_t oh, int64_t ow, typename T::V* acc0,
                          typename T::V* acc1) {
  constexpr int64_t kL = T::kLanes;
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) acc0[u] = acc1[u] = T::zero();
#pragma GCC unroll 4
  for (int r = 0; r < 4; ++r) {
    const float* row = plane + (oh + r) * wp + ow;
#pragma GCC unroll 3
    for (int kw = 0; kw < 3; ++kw) {
      const float* src = row + kw * p.dil_w;
      const typename T::V w0 = T::set1(r < 3 ? wk[r * 3 + kw] : 0.0f);
      const typename T::V w1 = T::set1(r > 0 ? wk[(r - 1) * 3 + kw] : 0.0f);
#pragma GCC unroll 4
      for (int u = 0; u < U; ++u) {
        const typename T::V x = T::loadu(src + u * kL);
        if (r < 3) acc0[u] = T::fmadd(w0, x, acc0[u]);
        if (r > 0) acc1[u] = T::fmadd(w1, x, acc1[u]);
      }
    }
  }
}

// The epilogue and store of `count` columns of output row oh from `acc` (one vector per kLanes).
template <class T>
void depthwise_store(const Epilogue& e, const cpu::Conv2DParams& p, float* yo, int64_t oc,
                     int64_t oh, int64_t ow, int64_t count, const typename T::V* acc) {
  constexpr int64_t kL = T::kLanes;
  for (int64_t u = 0; u * kL < count && ow + u * kL < p.out_w; ++u) {
    const int64_t col = oh * p.out_w + ow + u * kL;
    const int lanes = static_cast<int>(min64(kL, p.out_w - ow - u * kL));
    const typename T::V v = finish_v<T>(e, acc[u], oc, col, lanes);
    if (lanes == kL) {
      T::storeu(yo + col, v);
    } else {
      T::store_n(yo + col, v, lanes);
    }
  }
}

template <class T>
void depthwise_tasks(const DepthwisePlan& pl, const float* x, const float* w, const Epilogue& ep,
                     float* y, float* scratch, int64_t begin, int64_t end) {
  constexpr int64_t kL = T::kLanes;
  const FlushDenormals ftz;
  const cpu::Conv2DParams& p = pl.p;
  const int64_t mult = p.out_c / p.in_c;
  const int64_t n = p.out_h * p.out_w;
  const size_t plane_floats = depthwise_scratch_floats(pl);
  int64_t padded_channel = -1;
  std::memset(scratch, 0, plane_floats * sizeof(float));  // the padding, for every channel
  const DepthwiseRowFn row_fn = pick_depthwise_row<T>(p);
  const bool pairs = p.k_h == 3 && p.k_w == 3 && p.stride_h == 1 && p.stride_w == 1 && p.dil_h == 1;
  for (int64_t t = begin; t < end; ++t) {
    const int64_t oc = t % p.out_c, b = t / p.out_c;
    const int64_t channel = b * p.in_c + oc / mult;
    if (channel != padded_channel) {  // a multiplier reuses the padded plane
      copy_plane_rows<T>(p, pl.wp, x + channel * p.in_h * p.in_w, scratch);
      padded_channel = channel;
    }
    Epilogue e = ep;
    if (e.addend != nullptr) e.addend += b * p.out_c * e.addend_rs;
    const float* wk = w + oc * p.k_h * p.k_w;
    float* yo = y + (b * p.out_c + oc) * n;
    for (int64_t oh = 0; oh < p.out_h;) {
      typename T::V acc[4], acc1[4];
      if (pairs && oh + 1 < p.out_h) {
        for (int64_t ow = 0; ow < p.out_w;) {
          const int64_t left = p.out_w - ow;
          const int64_t u = left > 2 * kL ? 4 : left > kL ? 2 : 1;
          if (u == 4) {
            depthwise_pair_block<T, 4>(p, pl.wp, scratch, wk, oh, ow, acc, acc1);
          } else if (u == 2) {
            depthwise_pair_block<T, 2>(p, pl.wp, scratch, wk, oh, ow, acc, acc1);
          } else {
            depthwise_pair_block<T, 1>(p, pl.wp, scratch, wk, oh, ow, acc, acc1);
          }
          depthwise_store<T>(e, p, yo, oc, oh, ow, u * kL, acc);
          depthwise_store<T>(e, p, yo, oc, oh + 1, ow, u * kL, acc1);
          ow += u * kL;
        }
        oh += 2;
        continue;
      }
      for (int64_t ow = 0; ow < p.out_w;) {
        const int64_t done = row_fn(p, pl.wp, scratch, wk, oh, ow, acc);
        depthwise_store<T>(e, p, yo, oc, oh, ow, done, acc);
        ow += done;
      }
      ++oh;
    }
  }
}

}  // namespace
}  // namespace kiln::kernels::x86
