#pragma once
// The INT8 implicit-GEMM convolution behind qkernels.h over an INT8 traits type Q: the weight
// packing, the quad planes (X4) a task builds from its rows of the input, the patch panels copied
// from them, the register tile and the task driver. See qkernels.h for the layout and README.md.

#include "kernels/x86/qkernels_common.h"

namespace kiln::kernels::x86 {
namespace {

inline int64_t qceil(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline int64_t qround64(int64_t bytes) { return (bytes + 63) / 64 * 64; }

// --- weights ---------------------------------------------------------------------------------

// Traits whose depth loop runs on tiles (qvec_amx.h) name their step in quads, kTileQuads; the
// weights of a panel are then laid out as that loop loads them, and the depth is zero-padded to
// whole steps (QConvPlan::kqp).
template <class Q>
inline constexpr bool kTileQ = requires {
  Q::kTileQuads;
};

template <class Q>
constexpr int64_t depth_step() {
  if constexpr (kTileQ<Q>) {
    return Q::kTileQuads;
  } else {
    return 1;
  }
}

// Where row r's quad q sits in a weight panel: quad-major (the vector kernels broadcast one quad
// of every row per step), or per tile step row-major, a row's kTileQuads quads in its 64 bytes (a
// tile's rows, as tileloadd reads them).
template <class Q>
constexpr int64_t weight_quad_offset(int64_t q, int64_t r) {
  if constexpr (kTileQ<Q>) {
    constexpr int64_t kStep = Q::kTileQuads;
    return (q / kStep) * Q::kMr * kStep * 4 + r * kStep * 4 + (q % kStep) * 4;
  } else {
    return (q * Q::kMr + r) * Q::kWq;
  }
}

// W [out_c, cg, kh, kw] into, per group, MR-row panels of kqp quads ((kh, kw, channel quad), the
// channel quad fastest; missing channels, quads and rows zero), then int32 sum W per output
// channel, then per output channel and kernel row (panel_depth).
template <class Q>
void qconv_pack_weights_impl(const cpu::Conv2DParams& p, const int8_t* w, uint8_t* packed) {
  const int64_t mg = p.out_c / p.group, cg = p.in_c / p.group, khw = p.k_h * p.k_w;
  const int64_t cq = qceil(cg, 4), kq = khw * cq, panels = qceil(mg, Q::kMr);
  const int64_t kqp = qceil(kq, depth_step<Q>()) * depth_step<Q>();
  const int64_t panel_bytes = kqp * Q::kMr * Q::kWq;
  uint8_t* d = packed;
  for (int64_t g = 0; g < p.group; ++g) {
    for (int64_t panel = 0; panel < panels; ++panel, d += panel_bytes) {
      for (int64_t q = 0; q < kqp; ++q) {
        const int64_t tap = q / cq, c0 = (q % cq) * 4;
        for (int64_t r = 0; r < Q::kMr; ++r) {
          const int64_t m = panel * Q::kMr + r;
          int8_t quad[4] = {0, 0, 0, 0};
          for (int64_t j = 0; j < 4 && q < kq && m < mg && c0 + j < cg; ++j) {
            quad[j] = w[((g * mg + m) * cg + c0 + j) * khw + tap];
          }
          Q::pack_quad(quad, d + weight_quad_offset<Q>(q, r));
        }
      }
    }
  }
  auto* sums = reinterpret_cast<int32_t*>(packed + qround64(d - packed));
  int32_t* row_sums = sums + p.out_c;
  for (int64_t m = 0; m < p.out_c; ++m) {
    int32_t s = 0;
    for (int64_t i = 0; i < cg * khw; ++i) s += w[m * cg * khw + i];
    sums[m] = s;
    for (int64_t kh = 0; kh < p.k_h; ++kh) {
      int32_t r = 0;
      for (int64_t c = 0; c < cg; ++c) {
        for (int64_t kw = 0; kw < p.k_w; ++kw) r += w[(m * cg + c) * khw + kh * p.k_w + kw];
      }
      row_sums[m * p.k_h + kh] = r;
    }
  }
}

// --- quad planes -----------------------------------------------------------------------------

// Four 16-byte vectors interleaved into 16 int32 lanes (vector j in byte j of each lane).
inline void interleave16(__m128i a, __m128i b, __m128i c, __m128i d, uint8_t* dst) {
  const __m128i ab_lo = _mm_unpacklo_epi8(a, b), ab_hi = _mm_unpackhi_epi8(a, b);
  const __m128i cd_lo = _mm_unpacklo_epi8(c, d), cd_hi = _mm_unpackhi_epi8(c, d);
  auto* out = reinterpret_cast<__m128i*>(dst);
  _mm_storeu_si128(out, _mm_unpacklo_epi16(ab_lo, cd_lo));
  _mm_storeu_si128(out + 1, _mm_unpackhi_epi16(ab_lo, cd_lo));
  _mm_storeu_si128(out + 2, _mm_unpacklo_epi16(ab_hi, cd_hi));
  _mm_storeu_si128(out + 3, _mm_unpackhi_epi16(ab_hi, cd_hi));
}

// A 1x1, stride-1, unpadded convolution's patch panel straight from the input (xg: the image's
// and group's first channel): per channel quad, `row` bytes (pixels [j, j + row / 4)) of the 4
// channels interleaved; missing channels and pixels from `end` on read x_zero. (Its quad planes
// would be the same bytes: this skips writing and reading them.) Up to 63 bytes past each quad's
// row are written too (a later quad, or kQPanelCopySlack, takes them).
template <class Q>
void pack_flat_panel(const QConvPlan& pl, const uint8_t* xg, int64_t j, int64_t end, uint8_t x_zero,
                     int64_t row, uint8_t* dst) {
  const int64_t hw = pl.p.in_h * pl.p.in_w;
  const __m128i fill = _mm_set1_epi8(static_cast<char>(x_zero));
  for (int64_t c4 = 0; c4 < pl.cq; ++c4, dst += row) {
    for (int64_t g = 0; g < row / 4; g += 16) {
      const int n = static_cast<int>(min64(16, max64(0, end - (j + g))));
      __m128i r[4];
      for (int64_t t = 0; t < 4; ++t) {
        const int64_t c = c4 * 4 + t;
        r[t] = c < pl.cg && n > 0 ? Q::load16(xg + c * hw + j + g, 0, n, fill) : fill;
      }
      interleave16(r[0], r[1], r[2], r[3], dst + g * 4);
    }
  }
}

// True when some tap k < taps (dilation d) falls on stride phase `phase`: (k * d) % stride.
inline bool phase_used(int64_t taps, int64_t d, int64_t stride, int64_t phase) {
  for (int64_t k = 0; k < taps && k < stride; ++k) {
    if ((k * d) % stride == phase) return true;
  }
  return false;
}

// Input row ih of the four channels of quad c4 interleaved into int32 lanes (channel j in byte
// j) at qrow + pad_left lanes; missing channels read x_zero. Writes whole 16-lane groups (the
// lanes past in_w hold x_zero quads).
template <class Q>
void interleave_input_row(const QConvPlan& pl, const uint8_t* xg, int64_t c4, int64_t ih,
                          __m128i fill, uint8_t* qrow) {
  const cpu::Conv2DParams& p = pl.p;
  const int64_t hw = p.in_h * p.in_w;
  const uint8_t* rows[4];
  for (int64_t j = 0; j < 4; ++j) {
    const int64_t c = c4 * 4 + j;
    rows[j] = c < pl.cg ? xg + c * hw + ih * p.in_w : nullptr;
  }
  uint8_t* dst = qrow + p.pad_left * 4;
  for (int64_t t = 0; t < p.in_w; t += 16, dst += 64) {
    const int n = static_cast<int>(min64(16, p.in_w - t));
    __m128i r[4];
    for (int j = 0; j < 4; ++j)
      r[j] = rows[j] != nullptr ? Q::load16(rows[j] + t, 0, n, fill) : fill;
    interleave16(r[0], r[1], r[2], r[3], dst);
  }
}

// dst[t] = src[t * step] for t < count, int32 lanes; writes exactly count lanes.
inline void gather_quads(const uint8_t* src, int64_t step, int64_t count, uint8_t* dst) {
  if (step == 1) {
    std::memcpy(dst, src, static_cast<size_t>(count * 4));
    return;
  }
  int64_t t = 0;
  if (step == 2) {  // the even lanes of 8, 4 at a time
    for (; t + 4 <= count; t += 4) {
      const __m128 a = _mm_loadu_ps(reinterpret_cast<const float*>(src + t * 8));
      const __m128 b = _mm_loadu_ps(reinterpret_cast<const float*>(src + t * 8 + 16));
      _mm_storeu_ps(reinterpret_cast<float*>(dst + t * 4), _mm_shuffle_ps(a, b, 0x88));
    }
  }
  for (; t < count; ++t) std::memcpy(dst + t * 4, src + t * step * 4, 4);
}

// The quad planes of one image and group (xg: its first channel) for the phase rows that output
// rows [oh0, oh0 + rph - row_halo) read: [phase y][phase x][channel quad][rph][wps] int32 lanes,
// x_zero where the padded input is outside the input (and in missing channels). Each input row
// is interleaved once (into qrow, pl.qrow_lanes lanes) and every column phase gathered from it.
template <class Q>
void build_x4(const QConvPlan& pl, const uint8_t* xg, uint8_t x_zero, int64_t oh0, int64_t rph,
              uint8_t* x4, uint8_t* qrow) {
  const cpu::Conv2DParams& p = pl.p;
  const __m128i fill = _mm_set1_epi8(static_cast<char>(x_zero));
  std::memset(qrow, x_zero, static_cast<size_t>(pl.qrow_lanes * 4));
  const int64_t row = pl.wps * 4, plane = rph * row, phase = pl.cq * plane;
  for (int64_t py = 0; py < p.stride_h; ++py) {
    if (!phase_used(p.k_h, p.dil_h, p.stride_h, py)) continue;  // never read
    uint8_t* const x4y = x4 + py * p.stride_w * phase;
    for (int64_t c4 = 0; c4 < pl.cq; ++c4) {
      for (int64_t rr = 0; rr < rph; ++rr) {
        const int64_t ih = (oh0 + rr) * p.stride_h + py - p.pad_top;
        const bool inside = ih >= 0 && ih < p.in_h;
        if (inside) interleave_input_row<Q>(pl, xg, c4, ih, fill, qrow);
        for (int64_t px = 0; px < p.stride_w; ++px) {
          if (!phase_used(p.k_w, p.dil_w, p.stride_w, px)) continue;
          uint8_t* dst = x4y + px * phase + c4 * plane + rr * row;
          if (inside) {
            gather_quads(qrow + px * 4, p.stride_w, pl.wps, dst);
          } else {
            std::memset(dst, x_zero, static_cast<size_t>(row));
          }
        }
      }
    }
  }
}

// One output row's run of a patch panel: `lanes` pixels from panel lane `dst`, read from lane
// `src` of each quad plane (relative to the tap's first lane).
struct PanelRun {
  int64_t dst, src, lanes;
};

// The runs of output pixels [j, end) (at most NR), one per output row they touch; oh0 is the
// quad planes' first output row.
inline int panel_runs(const QConvPlan& pl, int64_t j, int64_t end, int64_t oh0, PanelRun* runs) {
  const int64_t out_w = pl.p.out_w;
  int n = 0;
  for (int64_t px = j; px < end;) {
    const int64_t oh = px / out_w, ow = px % out_w;
    const int64_t lanes = min64(out_w - ow, end - px);
    runs[n++] = PanelRun{px - j, (oh - oh0) * pl.wps + ow, lanes};
    px += lanes;
  }
  return n;
}

// `bytes` from src to dst in whole vectors of Q (32 or 64 bytes): up to 63 bytes past both ends
// are read and written (kQPanelCopySlack; a later run or quad overwrites what lands inside the
// panel). AVX-512's 64-byte copies halve the copies of a row of 9 to 16 lanes: the copies were
// 15-22% of the AMX kernel's time on ResNet-50's 3x3 layers.
template <class Q>
inline void copy_run(uint8_t* dst, const uint8_t* src, int64_t bytes) {
  constexpr int64_t kBytes = sizeof(typename Q::I);
  static_assert(kBytes <= kQPanelCopySlack);
  for (int64_t i = 0; i < bytes; i += kBytes) Q::store(dst + i, Q::load(src + i));
}

// The patch panel of a panel's runs: per quad (kh, kw, channel quad), `row` bytes a quad, each
// run's lanes copied from the quad planes, in order; only kernel rows [kh0, kh1] (the others' quads
// are left as they are: the panel's depth loop skips them, panel_depth).
template <class Q>
void pack_x4_panel(const QConvPlan& pl, const uint8_t* x4, int64_t rph, const PanelRun* runs,
                   int nruns, int64_t row, int64_t kh0, int64_t kh1, uint8_t* dst) {
  const cpu::Conv2DParams& p = pl.p;
  const int64_t plane = rph * pl.wps * 4;
  dst += kh0 * p.k_w * pl.cq * row;
  for (int64_t kh = kh0; kh <= kh1; ++kh) {
    const int64_t py = (kh * p.dil_h) % p.stride_h, ry = (kh * p.dil_h) / p.stride_h;
    for (int64_t kw = 0; kw < p.k_w; ++kw) {
      const int64_t px = (kw * p.dil_w) % p.stride_w, rx = (kw * p.dil_w) / p.stride_w;
      const uint8_t* src = x4 + (py * p.stride_w + px) * pl.cq * plane + (ry * pl.wps + rx) * 4;
      for (int64_t c4 = 0; c4 < pl.cq; ++c4, dst += row) {
        const uint8_t* quad = src + c4 * plane;
        for (int r = 0; r < nruns; ++r) {
          copy_run<Q>(dst + runs[r].dst * 4, quad + runs[r].src * 4, runs[r].lanes * 4);
        }
      }
    }
  }
}

// The lanes of the panel's vectors: pixels [j, end) are Y's elements j.. of each plane, so vector
// v stores from j + v * L; the panel is contiguous when all kNv vectors are full.
template <class Q>
QPanelSegs<Q> panel_segs(int64_t j, int64_t end) {
  QPanelSegs<Q> segs;
  segs.contiguous = true;
  for (int v = 0; v < Q::kNv; ++v) {
    const int64_t first = j + v * Q::kLanes;
    const int n = static_cast<int>(max64(0, min64(Q::kLanes, end - first)));
    segs.seg[v] = QSeg{0, n, first};
    segs.contiguous = segs.contiguous && n == Q::kLanes;
  }
  return segs;
}

// --- the register tile -------------------------------------------------------------------------

// The channels of a row panel, as the epilogue takes them (computed once per task, not per panel:
// deriving them per row took as many instructions as the row's two vectors on AMX): the
// accumulators' start (-x_zero * sum W), the scale and bias through QOut::scaled() and bias(); and
// Y's element of (row 0, output pixel 0) and plane size.
struct QRows {
  const int32_t* start;
  const float* scale;
  const float* bias;
  int64_t base, plane;
};

// Those of a task's `rows` channels from channel m, into start / scale / bias.
template <class Q>
void qconv_task_rows(const QOut<Q>& o, const int32_t* wsum, int64_t m, int64_t rows, int32_t* start,
                     float* scale, float* bias) {
  const QEpilogue& e = *o.e;
  for (int64_t i = 0; i < rows; ++i) {
    start[i] = zero_point_start(e.in_zero, wsum[m + i]);
    scale[i] = o.scaled(e.in_scale * e.w_scale[m + i]);
    bias[i] = o.bias(e.bias, m + i);
  }
}

// b: the patch panel, b_row bytes a quad (NR lanes of 4 bytes, or 4 a pixel in a short tail panel
// run by pixel_dots).
template <class Q>
using QConvUkernelFn = void (*)(int64_t kq, const uint8_t* a, const uint8_t* b, int64_t b_row,
                                const QRows& rows, const QPanelSegs<Q>& segs, const QOut<Q>& o);

// How far ahead of the depth loop its weight panel is prefetched. In a network the weights come
// from memory (INT8 ResNet-50 reads 25 MB an image) and the hardware prefetchers did not keep
// ahead: per-layer profiles of one engine, 4 alternated rounds, layer4's 3x3 512@7 layers 0.32
// -> 0.24 ms and the network's layers 9.7-10.8 -> 8.8-9.5 ms in all; 1, 2 and 4 KiB ahead
// measured alike on a quiet host, 512 bytes less. (The GEMM's B, prefetched alike, made
// ResNet-50's 2048 -> 1000 classifier slower: 0.068 -> 0.076 ms.)
inline constexpr int64_t kWeightPrefetchBytes = 2048;

// The depth loop of qconv_ukernel: R rows x NV vectors of accumulators, started at -x_zero * sum W
// per row, over all kq quads of the panel `b` (NR lanes per quad) and the weight panel `a` (MR
// quads per step), stored to `out`. Its own function, with every loop over the accumulators
// unrolled, so that GCC keeps them in registers (a loop that is not unrolled, such as the
// epilogue's, makes it keep the array in memory and store every accumulator on every step).
template <class Q, int R, int NV>
__attribute__((noinline)) void qconv_depth_loop(int64_t kq, const uint8_t* a, const uint8_t* b,
                                                const int32_t* start, typename Q::I* out) {
  using I = typename Q::I;
  constexpr int64_t kPanelRow = Q::kNv * Q::kLanes * 4;
  I acc[R][NV];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    const I s = Q::set1(start[r]);
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = s;
  }
  for (int64_t q = 0; q < kq; ++q, a += Q::kMr * Q::kWq, b += kPanelRow) {
    _mm_prefetch(reinterpret_cast<const char*>(a) + kWeightPrefetchBytes, _MM_HINT_T0);
    typename Q::P x[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) x[v] = Q::prep(Q::load(b + v * Q::kVecBytes));
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = Q::dot(acc[r][v], x[v], a + r * Q::kWq);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) Q::store(out + r * NV + v, acc[r][v]);
  }
}

// A panel's last vector holding at most this many pixels runs them with the output channels in
// the lanes (Q::pixel_dots): a 7x7 image's 49th pixel, a 14x14 image's last 4. The vector tile
// would spend kMr broadcasts and dot products a quad on them (8 for one useful lane), a third of
// what the 48 pixels before cost; pixel_dots spends one weight load a quad and one dot product
// per pixel, reading a panel packed 4 bytes a pixel (qconv_tasks).
inline constexpr int kPixelDotMaxLanes = 4;

// Whether a panel of `pixels` output pixels is such a tail: qconv_tasks then packs it 4 bytes a
// pixel and qconv_ukernel runs it by pixel_dots, so both ask this one question.
template <class Q>
constexpr bool qconv_pixel_panel(int64_t pixels) {
  return Q::kPixelDot && pixels <= kPixelDotMaxLanes;
}

// The depth loop of that case: the same accumulators as qconv_depth_loop<Q, R, 1> in the lanes
// [0, lanes) of out[r] (the others are never stored).
template <class Q, int R>
void qconv_depth_pixels(int64_t kq, const uint8_t* a, const uint8_t* b, int64_t b_row,
                        const int32_t* start, int lanes, typename Q::I* out) {
  static_assert(kPixelDotMaxLanes == 4);
  int32_t start8[Q::kMr] = {};
  for (int r = 0; r < R; ++r) start8[r] = start[r];
  int32_t acc[kPixelDotMaxLanes][Q::kMr];
  switch (lanes) {
    case 1:
      Q::template pixel_dots<1>(kq, a, b, b_row, start8, acc);
      break;
    case 2:
      Q::template pixel_dots<2>(kq, a, b, b_row, start8, acc);
      break;
    case 3:
      Q::template pixel_dots<3>(kq, a, b, b_row, start8, acc);
      break;
    default:
      Q::template pixel_dots<4>(kq, a, b, b_row, start8, acc);
      break;
  }
  for (int l = 0; l < lanes; ++l) {
    for (int r = 0; r < R; ++r)
      std::memcpy(reinterpret_cast<char*>(out + r) + l * 4, &acc[l][r], 4);
  }
}

// The direct uint8 epilogue (QOut::direct_u8) of a contiguous panel (QPanelSegs::contiguous): whole
// vectors loaded, a row's NV vectors stored together by one saturating pack, no lane runs to walk
// (kAddStart: the accumulators still lack rows.start[r], added first). With a shallow depth (a 1x1
// convolution of 64 channels: 16 quads) the general epilogue, about 28 instructions an
// accumulator, took as long as the depth loop.
template <class Q, int R, int NV, bool kAddStart = false>
void qconv_epilogue_contiguous(const QOut<Q>& o, const typename Q::I* done, const QRows& rows,
                               int64_t off) {
  using F = typename Q::F;
  using I = typename Q::I;
  const typename F::V z_scale = o.direct_z_scale;
  const uint8_t* z = o.e->z_u8;
  auto* const y = static_cast<uint8_t*>(o.y);
  for (int r = 0; r < R; ++r) {
    const typename F::V scale = F::set1(rows.scale[r]);
    const typename F::V bias = F::set1(rows.bias[r]);
    const int64_t at = rows.base + r * rows.plane + off;
    const I s = Q::set1(kAddStart ? rows.start[r] : 0);
    I out[NV];
    for (int v = 0; v < NV; ++v) {
      const I acc = kAddStart ? Q::add(done[r * NV + v], s) : done[r * NV + v];
      typename F::V q = F::fmadd(Q::to_float(acc), scale, bias);
      if (z != nullptr) {
        const I zv = Q::load_u8(z + at + v * Q::kLanes, 0, Q::kLanes, Q::set1(0));  // all lanes
        q = F::fmadd(Q::to_float(zv), z_scale, q);
      }
      out[v] = direct_u8_round(o, q);
    }
    Q::template store_u8_saturated<NV>(y + at, out);
  }
}

// Rows [r0, r0 + nrows) of the accumulators (RC at most) through the general epilogue. A tile
// kernel finishes its 32 rows x 2 vectors in chunks: all at once would keep 64 float vectors live.
template <class Q, int RC, int NV>
__attribute__((always_inline)) inline void qconv_finish_rows(const QOut<Q>& o,
                                                             const typename Q::I* done,
                                                             const QRows& rows,
                                                             const QPanelSegs<Q>& segs, int r0,
                                                             int nrows) {
  q_finish<Q, RC * NV>(
      o, done + r0 * NV, [&](auto&& fn) __attribute__((always_inline)) {
        for (int r = 0; r < nrows; ++r) {
          const typename Q::F::V scale = Q::F::set1(rows.scale[r0 + r]);
          const typename Q::F::V bias = Q::F::set1(rows.bias[r0 + r]);
          for (int v = 0; v < NV; ++v)
            fn(r * NV + v, scale, bias, segs.seg[v], rows.base + (r0 + r) * rows.plane);
        }
      });
}

// R rows x NV vectors of output: the depth loop, then the epilogue.
template <class Q, int R, int NV>
void qconv_ukernel(int64_t kq, const uint8_t* a, const uint8_t* b, int64_t b_row, const QRows& rows,
                   const QPanelSegs<Q>& segs, const QOut<Q>& o) {
  const int32_t* const start = rows.start;
  if constexpr (kTileQ<Q>) {
    // Tiles store whole 16-row blocks.
    alignas(64) typename Q::I done[(R + 15) / 16 * 16 * NV];
    Q::template tile_depth_loop<R, NV>(kq, a, b, done);
    // The tiles start at zero: the zero point's start joins in the epilogue's first step.
    if (o.direct_u8 && segs.contiguous) {
      return qconv_epilogue_contiguous<Q, R, NV, true>(o, done, rows, segs.seg[0].off);
    }
    for (int r = 0; r < R; ++r) {
      const typename Q::I s = Q::set1(start[r]);
      for (int v = 0; v < NV; ++v) done[r * NV + v] = Q::add(done[r * NV + v], s);
    }
    constexpr int kChunk = 8;
    for (int r0 = 0; r0 < R; r0 += kChunk) {
      qconv_finish_rows<Q, kChunk, NV>(o, done, rows, segs, r0, std::min(kChunk, R - r0));
    }
    return;
  } else {
    alignas(64) typename Q::I done[R * NV];
    if constexpr (NV == 1 && Q::kPixelDot) {
      if (qconv_pixel_panel<Q>(segs.seg[0].hi)) {
        qconv_depth_pixels<Q, R>(kq, a, b, b_row, start, segs.seg[0].hi, done);
      } else {
        qconv_depth_loop<Q, R, NV>(kq, a, b, start, done);
      }
    } else {
      qconv_depth_loop<Q, R, NV>(kq, a, b, start, done);
    }
    if (o.direct_u8 && segs.contiguous) {
      return qconv_epilogue_contiguous<Q, R, NV>(o, done, rows, segs.seg[0].off);
    }
    qconv_finish_rows<Q, R, NV>(o, done, rows, segs, 0, R);
  }
}

template <class Q, int... I>
constexpr auto make_qconv_table(std::integer_sequence<int, I...>) {
  return std::array<QConvUkernelFn<Q>, sizeof...(I)>{
      &qconv_ukernel<Q, I / Q::kNv + 1, I % Q::kNv + 1>...};
}

template <class Q>
inline constexpr auto kQConvUkernels =
    make_qconv_table<Q>(std::make_integer_sequence<int, Q::kMr * Q::kNv>{});

// --- the driver --------------------------------------------------------------------------------

// A tile ISA's per-thread state (Q::TileScope: the tile configuration, loaded for a task range and
// released after it); nothing for the vector ISAs.
struct NoTileScope {};
template <class Q>
auto tile_scope() {
  if constexpr (kTileQ<Q>) {
    return typename Q::TileScope();
  } else {
    return NoTileScope();
  }
}

// The depth a panel of output rows [oh0, oh1] runs: all kqp quads (kernel rows first .. last: all),
// or (vector ISAs: a tile's depth steps are whole tiles) only the quads q0 .. q0 + quads of the
// kernel rows [first, last] that read inside the image: the others read only padding for all of
// the panel's rows (a dilated convolution's outer rows near the image's top and bottom:
// DeepLabV3's ASPP at rate 12 on a 16x16 map). Every row dead: all of them (the bias).
struct QPanelDepth {
  bool full = true;
  int64_t first = 0, last = 0, q0 = 0, quads = 0;
};
template <class Q>
QPanelDepth panel_depth(const QConvPlan& pl, int64_t oh0, int64_t oh1) {
  const cpu::Conv2DParams& p = pl.p;
  QPanelDepth d{true, 0, p.k_h - 1, 0, pl.kqp};
  if constexpr (!kTileQ<Q>) {
    const auto reads_image = [&](int64_t kh) {
      for (int64_t oh = oh0; oh <= oh1; ++oh) {
        const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
        if (ih >= 0 && ih < p.in_h) return true;
      }
      return false;
    };
    int64_t first = 0, last = p.k_h - 1;
    while (first <= last && !reads_image(first)) ++first;
    while (last > first && !reads_image(last)) --last;
    if (first <= last && (first > 0 || last < p.k_h - 1)) {
      const int64_t row_quads = p.k_w * pl.cq;
      d = {false, first, last, first * row_quads, (last - first + 1) * row_quads};
    }
  }
  return d;
}

// A task is (image, group, pixel block, channel block). Its quad planes are built once (and
// kept for the next task of the same image, group and block: channel blocks vary fastest); per
// pl.panels_at_once panels of NR output pixels the patches are copied into the thread's scratch
// and every weight panel of the channel block runs against each of them, so that the weights
// stream once per that many panels.
template <class Q>
void qconv_tasks(const QConvPlan& pl, const uint8_t* x, const uint8_t* packed, const QEpilogue& ep,
                 void* y, uint8_t* scratch, int64_t begin, int64_t end) {
  constexpr int64_t kMr = Q::kMr, kNr = Q::kNv * Q::kLanes;
  constexpr int kMaxPanels = kQConvMaxPanelsAtOnce;
  const int panels_at_once = pl.panels_at_once;
  const FlushDenormals ftz;
  [[maybe_unused]] const auto tiles = tile_scope<Q>();
  const QOut<Q> o(ep, y);
  const cpu::Conv2DParams& p = pl.p;
  const int64_t slot = qround64(pl.kqp * kNr * 4 + kQPanelCopySlack);
  uint8_t* const panels = scratch;
  uint8_t* qrow = panels + panels_at_once * slot;
  uint8_t* x4 = qrow + qround64(pl.qrow_lanes * 4);
  // The task's rows (QRows), after the quad planes.
  auto* row_start = reinterpret_cast<int32_t*>(x4 + pl.x4_bytes);
  auto* row_scale = reinterpret_cast<float*>(row_start + pl.mc);
  auto* row_bias = row_scale + pl.mc;
  // The depth's padding quads meet zero weights: zeroed once, only so that they read as data.
  for (int k = 0; k < panels_at_once; ++k) {
    std::memset(panels + k * slot + pl.kq * kNr * 4, 0,
                static_cast<size_t>((pl.kqp - pl.kq) * kNr * 4));
  }
  const int64_t w_panel = pl.kqp * kMr * Q::kWq;
  const int64_t w_group = qceil(pl.mg, kMr) * w_panel;
  const auto* wsum = reinterpret_cast<const int32_t*>(packed + qround64(p.group * w_group));
  const int64_t plane = p.out_h * p.out_w;
  int64_t built = -1;  // (image, group, block) whose quad planes x4 holds
  for (int64_t t = begin; t < end; ++t) {
    const int64_t mb = t % pl.m_blocks;
    const int64_t nb = (t / pl.m_blocks) % pl.n_blocks;
    const int64_t g = (t / (pl.m_blocks * pl.n_blocks)) % p.group;
    const int64_t b = t / (pl.m_blocks * pl.n_blocks * p.group);
    const int64_t m0 = mb * pl.mc, rows = min64(pl.mc, pl.mg - m0);
    const int64_t p0 = nb * pl.nc, p1 = min64(p0 + pl.nc, pl.nw);
    const int64_t oh0 = p0 / p.out_w, rph = (p1 - 1) / p.out_w - oh0 + 1 + pl.row_halo;
    const uint8_t* xg = x + (b * p.in_c + g * pl.cg) * p.in_h * p.in_w;
    if (!pl.flat && built != t / pl.m_blocks) {
      build_x4<Q>(pl, xg, static_cast<uint8_t>(ep.in_zero), oh0, rph, x4, qrow);
      built = t / pl.m_blocks;
    }
    const int64_t m = g * pl.mg + m0;
    qconv_task_rows(o, wsum, m, rows, row_start, row_scale, row_bias);
    const QRows all{row_start, row_scale, row_bias, (b * p.out_c + m) * plane, plane};
    const uint8_t* wp = packed + g * w_group + (m0 / kMr) * w_panel;
    for (int64_t j0 = p0; j0 < p1; j0 += panels_at_once * kNr) {
      int np = 0;
      int64_t row[kMaxPanels], nv[kMaxPanels];
      QPanelSegs<Q> segs[kMaxPanels];
      QPanelDepth live[kMaxPanels];
      for (int64_t j = j0; j < p1 && np < panels_at_once; j += kNr, ++np) {
        uint8_t* const panel = panels + np * slot;
        const int64_t n = min64(kNr, p1 - j);
        nv[np] = qceil(n, Q::kLanes);
        // A short tail panel (run by pixel_dots) keeps its pixels' quads together: its depth
        // loop then reads one cache line per 16 / n quads, not one per quad.
        row[np] = qconv_pixel_panel<Q>(n) ? n * 4 : kNr * 4;
        live[np] = panel_depth<Q>(pl, j / p.out_w, (j + n - 1) / p.out_w);
        if (pl.flat) {
          pack_flat_panel<Q>(pl, xg, j, p1, static_cast<uint8_t>(ep.in_zero), row[np], panel);
        } else {
          PanelRun runs[kNr];
          const int nruns = panel_runs(pl, j, j + n, oh0, runs);
          pack_x4_panel<Q>(pl, x4, rph, runs, nruns, row[np], live[np].first, live[np].last, panel);
        }
        segs[np] = panel_segs<Q>(j, p1);
      }
      for (int64_t i = 0; i < rows; i += kMr) {
        const int64_t r = min64(kMr, rows - i);
        QRows rs = all;
        rs.start += i;
        rs.scale += i;
        rs.bias += i;
        rs.base += i * plane;
        for (int k = 0; k < np; ++k) {
          // The live kernel rows' depth (all of it for most panels); the start of a panel with
          // dead rows leaves out their zero points.
          const QPanelDepth& d = live[k];
          QRows part = rs;
          int32_t start[kMr];
          if (!d.full) {
            for (int64_t rr = 0; rr < r; ++rr) {
              const int32_t* rsum = wsum + p.out_c + (m + i + rr) * p.k_h;
              int32_t s = 0;
              for (int64_t kh = d.first; kh <= d.last; ++kh) s += rsum[kh];
              start[rr] = zero_point_start(ep.in_zero, s);
            }
            part.start = start;
          }
          kQConvUkernels<Q>[(r - 1) * Q::kNv + (nv[k] - 1)](
              d.quads, wp + (i / kMr) * w_panel + d.q0 * kMr * Q::kWq,
              panels + k * slot + d.q0 * row[k], row[k], part, segs[k], o);
        }
      }
    }
  }
}

}  // namespace
}  // namespace kiln::kernels::x86
