#pragma once
// The implicit-GEMM convolution behind kernels.h over a vector-traits type T: patches packed
// straight into the microkernel's B panels.
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

// Whether the next 8 depth steps are 8 taps of one kernel row (stride above 2, undilated, in
// the same channel and kernel row) that every run reads inside its input row: copy_taps8 then
// packs them 8 pixels at a time. A patch embedding (16 x 16, stride 16) had packed each of its
// 768 x 196 values alone.
struct PatchRun {
  int64_t at, len, oh, ow;
};
inline bool patch_taps8(const PatchGeom& g, const PatchRun* runs, int nruns, int64_t kw,
                        int64_t steps_left) {
  if (g.s_w <= 2 || g.d_w != 1 || kw % 8 != 0 || kw + 8 > g.k_w || steps_left < 8) return false;
  for (int i = 0; i < nruns; ++i) {
    const int64_t iw0 = runs[i].ow * g.s_w - g.pad_l + kw;
    if (iw0 < 0 || iw0 + (runs[i].len - 1) * g.s_w + 7 >= g.in_w) return false;
  }
  return true;
}

// d[t * NR + q] = row[q * s_w + t] for 8 taps t and `len` pixels q: 8 x 8 transposes, the last
// len % 8 pixels one by one.
template <int64_t kNr>
void copy_taps8(const float* row, int64_t s_w, float* d, int64_t len) {
  int64_t q = 0;
  for (; q + 8 <= len; q += 8) transpose8x8(row + q * s_w, s_w, d + q, kNr);
  for (; q < len; ++q) {
    for (int64_t t = 0; t < 8; ++t) d[t * kNr + q] = row[q * s_w + t];
  }
}

// One B panel: patch rows [k0, k0 + kc) x output pixels [n0, n0 + cols) of one image and group
// (xg: its first input channel), NR floats per row, columns past `cols` zero. The panel's pixels
// are split once into runs within one output row; each patch row then copies each run.
template <class T>
void pack_patch_panel(const PatchGeom& g, const float* xg, int64_t k0, int64_t kc, int64_t n0,
                      int64_t cols, float* dst) {
  constexpr int64_t kNr = T::kNv * T::kLanes;
  using Run = PatchRun;
  Run runs[kNr];
  int nruns = 0;
  for (int64_t t = 0, oh = n0 / g.out_w, ow = n0 % g.out_w; t < cols; ++oh, ow = 0) {
    const int64_t len = min64(cols - t, g.out_w - ow);
    runs[nruns++] = Run{t, len, oh, ow};
    t += len;
  }
  const int64_t khw = g.k_h * g.k_w;
  int64_t c = k0 / khw, kh = (k0 % khw) / g.k_w, kw = k0 % g.k_w;
  for (int64_t p = 0; p < kc;) {
    const float* xc = xg + c * g.in_h * g.in_w;
    const int64_t taps = patch_taps8(g, runs, nruns, kw, kc - p) ? 8 : 1;
    for (int i = 0; i < nruns; ++i) {
      const Run& r = runs[i];
      float* d = dst + r.at;
      const int64_t ih = r.oh * g.s_h - g.pad_t + kh * g.d_h;
      const int64_t iw0 = r.ow * g.s_w - g.pad_l + kw * g.d_w;
      if (ih < 0 || ih >= g.in_h) {
        for (int64_t t = 0; t < taps; ++t) {
          std::memset(d + t * kNr, 0, static_cast<size_t>(r.len) * sizeof(float));
        }
      } else if (taps == 8) {
        copy_taps8<kNr>(xc + ih * g.in_w + iw0, g.s_w, d, r.len);
      } else if (g.s_w == 1) {
        copy_row_segment<T>(xc + ih * g.in_w, iw0, g.in_w, d, r.len);
      } else if (g.s_w == 2) {
        copy_row_segment_s2<T>(xc + ih * g.in_w, iw0, g.in_w, d, r.len);
      } else if (iw0 >= 0 && iw0 + (r.len - 1) * g.s_w < g.in_w) {  // inside the row
        const float* row = xc + ih * g.in_w + iw0;
        for (int64_t q = 0; q < r.len; ++q) d[q] = row[q * g.s_w];
      } else {
        const float* row = xc + ih * g.in_w;
        for (int64_t q = 0; q < r.len; ++q) {
          const int64_t iw = iw0 + q * g.s_w;
          d[q] = iw >= 0 && iw < g.in_w ? row[iw] : 0.0f;
        }
      }
    }
    for (int64_t t = 0; t < taps; ++t, ++p, dst += kNr) {
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

// One task's flat (1x1) output block [m0, m0 + rows) x [n0, n0 + cols): per sub-block of
// `block_cols` pixels and per depth step of `kstep` channels (the whole depth in one step when
// kstep >= kdim), the B block is packed into scratch and every weight panel runs against it.
// Weight panel outside the column panels: the tiles then write MR rows of Y front to back (MR
// store streams, which the prefetchers follow) instead of every row of the task a panel at a time
// (up to 256 streams: a residual 1x1 layer of ResNet-50 ran 1.3-1.5x slower in the network than
// alone). The B block is read from L2 once per weight panel. onto_y: Y holds the residual (in
// place), so every depth step accumulates onto it.
struct FlatTask {
  const float* xg;  // the image and group's first input channel
  const float* wg;  // the first packed weight panel of the block
  float* yg;        // the image and group's first output channel
  int64_t m0, n0, rows, cols;
};

template <class T>
void flat_task_blocks(const ConvGemmPlan& pl, const FlatTask& t, const Epilogue& e,
                      int64_t block_cols, int64_t kstep, bool onto_y, float* scratch) {
  constexpr int64_t kMr = T::kMr;
  constexpr int64_t kNr = T::kNv * T::kLanes;
  for (int64_t j0 = 0; j0 < t.cols; j0 += block_cols) {
    const int64_t jw = min64(block_cols, t.cols - j0);
    for (int64_t k0 = 0; k0 == 0 || k0 < pl.kdim; k0 += kstep) {
      const int64_t kc = min64(kstep, pl.kdim - k0);
      pack_flat_block<T>(t.xg, pl.n, k0, kc, t.n0 + j0, jw, scratch);
      for (int64_t i = 0; i < t.rows; i += kMr) {
        for (int64_t j = 0; j < jw; j += kNr) {
          column_panel<T>(kc, min64(kMr, t.rows - i), min64(kNr, jw - j),
                          t.wg + (i / kMr) * pl.kdim * kMr + k0 * kMr, pl.kdim * kMr,
                          scratch + (j / kNr) * kc * kNr, t.yg + (t.m0 + i) * pl.n + t.n0 + j0 + j,
                          pl.n, onto_y || k0 > 0, k0 + kc >= pl.kdim ? &e : nullptr, t.m0 + i,
                          t.n0 + j0 + j);
        }
      }
    }
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
  // In place (the residual is Y): every tile accumulates onto Y, which holds the residual.
  const bool onto_y = ep.addend != nullptr && ep.addend == y;
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
    if (onto_y) e.addend = nullptr;
    if (e.addend != nullptr) e.addend += (b * p.out_c + g * pl.mg) * e.addend_rs;
    const float* wg = packed_w + g * w_group + (m0 / kMr) * pl.kdim * kMr;
    if (pl.whole_depth) {  // B over the whole depth, in blocks of depth_cols pixels
      flat_task_blocks<T>(pl, FlatTask{xg, wg, yg, m0, n0, rows, cols}, e, pl.depth_cols, pl.kdim,
                          onto_y, scratch);
      continue;
    }
    if (pl.direct_b) {  // full column panels straight from the input rows; the tail packed
      const int64_t full = cols / kNr * kNr;
      for (int64_t j = 0; j < full; j += kNr) {
        column_panel<T>(pl.kdim, rows, kNr, wg, pl.kdim * kMr, xg + n0 + j, yg + m0 * pl.n + n0 + j,
                        pl.n, onto_y, &e, m0, n0 + j, pl.n);
      }
      if (full < cols) {
        pack_flat_block<T>(xg, pl.n, 0, pl.kdim, n0 + full, cols - full, scratch);
        column_panel<T>(pl.kdim, rows, cols - full, wg, pl.kdim * kMr, scratch,
                        yg + m0 * pl.n + n0 + full, pl.n, onto_y, &e, m0, n0 + full);
      }
      continue;
    }
    if (pl.flat) {  // per column sub-block and depth step
      flat_task_blocks<T>(pl, FlatTask{xg, wg, yg, m0, n0, rows, cols}, e, pl.flat_cols, pl.bl.kc,
                          onto_y, scratch);
      continue;
    }
    auto step = [&](int64_t k0, int64_t j) {
      const int64_t kc = min64(pl.bl.kc, pl.kdim - k0);
      const int64_t w = min64(kNr, cols - j);
      pack_patch_panel<T>(geom, xg, k0, kc, n0 + j, w, scratch);
      column_panel<T>(kc, rows, w, wg + k0 * kMr, pl.kdim * kMr, scratch, yg + m0 * pl.n + n0 + j,
                      pl.n, onto_y || k0 > 0, k0 + kc >= pl.kdim ? &e : nullptr, m0, n0 + j);
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

}  // namespace
}  // namespace kiln::kernels::x86
