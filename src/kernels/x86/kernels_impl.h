#pragma once
// The ISA-generic kernels behind kernels.h, written over a vector-traits type T (vec_avx512.h,
// vec_avx2.h) and instantiated once per ISA. Everything here sits in an anonymous namespace: each
// ISA's translation unit gets its own private copy, so the linker can never hand one ISA's code to
// another (the hazard of inline functions compiled under different -m flags).
//
// The GEMM core is an MR x (NV vectors) register tile (ukernel) reading an MR-row panel of A
// (k-major, MR floats per step), or MR rows of a row-major A in place, and an NR-column panel of
// B (NR floats per step). Tails in M and N use the same code: a table holds one instantiation per
// (rows, vectors) and the last vector's store is masked. The epilogue (kernels_math.h) runs on the
// accumulators before the only store.

#include <immintrin.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "kernels/x86/kernels.h"

namespace kiln::kernels::x86 {
namespace {

#include "kernels/x86/kernels_math.h"

inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

// Flush denormals to zero (FTZ) and treat denormal inputs as zero (DAZ) while a kernel runs: a
// denormal operand costs ~100 cycles per FMA. MXCSR is per thread, so every task range sets it.
class FlushDenormals {
 public:
  FlushDenormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | 0x8040u); }
  ~FlushDenormals() { _mm_setcsr(saved_); }

 private:
  unsigned saved_;
};

// --- the register tile ---------------------------------------------------------------------------

// B panels hold float32 (TB = float) or IEEE binary16 bits (TB = uint16_t: an FP16 layer's
// weights, widened to float32 in registers by vcvtph2ps; the arithmetic stays float32). lda: the
// row stride of an A read in place (kDirectA); unused for a packed panel.
template <class TB>
using UkernelFn = void (*)(int64_t kc, const float* a, int64_t lda, const TB* b, int64_t b_step,
                           float* c, int64_t ldc, int last_lanes, bool accumulate,
                           const Epilogue* ep, int64_t row, int64_t col);

template <class T>
inline typename T::V load_b(const float* p) {
  return T::loadu(p);
}
template <class T>
inline typename T::V load_b(const uint16_t* p) {
  return T::load_half(p);
}

// A tile's last vector with at most this many columns (a 7x7 image's 49th pixel, a 14x14 image's
// last 4) runs them one by one with the rows in the lanes (T::pixel_dot): the vector tile would
// spend R broadcasts and FMAs a depth step on them as on a full vector.
inline constexpr int kPixelDotMaxCols = 4;

// s[r][0], lanes [0, cols): the tile's sums, column by column (float32 B only).
template <class T, int R>
void pixel_columns(int64_t kc, const float* a, const float* b, int64_t b_step, int cols,
                   typename T::V (&s)[R][1]) {
  alignas(64) float out[R][T::kLanes] = {};
  for (int l = 0; l < cols; ++l) {
    float acc[T::kMr];
    T::pixel_dot(kc, a, b + l, b_step, acc);
    for (int r = 0; r < R; ++r) out[r][l] = acc[r];
  }
  for (int r = 0; r < R; ++r) s[r][0] = T::loadu(out[r]);
}

// c[R x NV vectors] (+)= s, then on the last depth block (ep != null) the epilogue, then the
// store. Only `last_lanes` lanes of the last vector are read or written.
template <class T, int R, int NV>
inline __attribute__((always_inline)) void store_tile(typename T::V (&s)[R][NV], float* c,
                                                      int64_t ldc, int last_lanes, bool accumulate,
                                                      const Epilogue* ep, int64_t row,
                                                      int64_t col) {
  constexpr int kL = T::kLanes;
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      const int lanes = v == NV - 1 ? last_lanes : kL;
      const float* cp = c + r * ldc + v * kL;
      if (accumulate) s[r][v] = T::add(s[r][v], lanes == kL ? T::loadu(cp) : T::load_n(cp, lanes));
      if (ep != nullptr) s[r][v] = finish_linear_v<T>(*ep, s[r][v], row + r, col + v * kL, lanes);
    }
  }
  if (ep != nullptr) activate_n<T, R * NV>(*ep, &s[0][0]);
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      float* cp = c + r * ldc + v * kL;
      if (v < NV - 1 || last_lanes == kL) {
        T::storeu(cp, s[r][v]);
      } else {
        T::store_n(cp, s[r][v], last_lanes);
      }
    }
  }
}

// c[R x NV vectors] (+)= A x b-panel over kc steps, stored by store_tile. A is an MR-row panel,
// or (kDirectA) R rows lda apart read in place. B's depth steps are b_step apart (NR in a packed
// panel; a row of the input for a flat 1x1 convolution read in place). A last vector of at most
// kPixelDotMaxCols columns of a packed A is summed column by column (pixel_columns).
template <class T, class TB, int R, int NV, bool kDirectA = false>
void ukernel(int64_t kc, const float* a, int64_t lda, const TB* b, int64_t b_step, float* c,
             int64_t ldc, int last_lanes, bool accumulate, const Epilogue* ep, int64_t row,
             int64_t col) {
  using V = typename T::V;
  constexpr int kL = T::kLanes;
  constexpr int kMr = T::kMr;
  if constexpr (T::kPixelDot && std::is_same_v<TB, float> && !kDirectA) {
    if (last_lanes <= kPixelDotMaxCols) {
      if constexpr (NV > 1) {  // the full vectors, then the short one
        ukernel<T, TB, R, NV - 1>(kc, a, lda, b, b_step, c, ldc, kL, accumulate, ep, row, col);
        ukernel<T, TB, R, 1>(kc, a, lda, b + (NV - 1) * kL, b_step, c + (NV - 1) * kL, ldc,
                             last_lanes, accumulate, ep, row, col + (NV - 1) * kL);
      } else {
        V s[R][1];
        pixel_columns<T, R>(kc, a, b, b_step, last_lanes, s);
        store_tile<T, R, 1>(s, c, ldc, last_lanes, accumulate, ep, row, col);
      }
      return;
    }
  }
  V s[R][NV];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) s[r][v] = T::zero();
  }
  const float* ar[R];  // kDirectA: the rows of A
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) ar[r] = a + r * lda;
#pragma GCC unroll 2
  for (int64_t p = 0; p < kc; ++p) {
    V bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = load_b<T>(b + v * kL);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const V av = T::set1(kDirectA ? ar[r][p] : a[r]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) s[r][v] = T::fmadd(av, bv[v], s[r][v]);
    }
    if (!kDirectA) a += kMr;
    b += b_step;
  }
  store_tile<T, R, NV>(s, c, ldc, last_lanes, accumulate, ep, row, col);
}

template <class T, class TB, bool kDirectA, int... I>
constexpr auto make_ukernel_table(std::integer_sequence<int, I...>) {
  return std::array<UkernelFn<TB>, sizeof...(I)>{
      &ukernel<T, TB, I / T::kNv + 1, I % T::kNv + 1, kDirectA>...};
}

template <class T, class TB = float, bool kDirectA = false>
inline constexpr auto kUkernels =
    make_ukernel_table<T, TB, kDirectA>(std::make_integer_sequence<int, T::kMr * T::kNv>{});

// One NR-column panel of C (+)= every MR-row panel of A x the B panel `b`, for one depth block:
// the B panel stays in L1 while the A panels stream from L2. A's panels are pa_stride apart, or
// (kDirectA) A is row-major with rows pa_stride apart, read in place. (row0, col0) is C's origin
// in the epilogue's index space.
template <class T, class TB = float, bool kDirectA = false>
void column_panel(int64_t kc, int64_t m, int64_t cols, const float* pa, int64_t pa_stride,
                  const TB* b, float* c, int64_t ldc, bool accumulate, const Epilogue* ep,
                  int64_t row0, int64_t col0, int64_t b_step = T::kNv * T::kLanes) {
  constexpr int64_t kMr = T::kMr;
  constexpr auto& kernels = kUkernels<T, TB, kDirectA>;
  const int64_t nv = (cols + T::kLanes - 1) / T::kLanes;
  const int last = static_cast<int>(cols - (nv - 1) * T::kLanes);
  const UkernelFn<TB> full = kernels[(kMr - 1) * T::kNv + (nv - 1)];
  const auto rows_at = [&](int64_t i) { return pa + (kDirectA ? i : i / kMr) * pa_stride; };
  int64_t i = 0;
  for (; i + kMr <= m; i += kMr) {
    full(kc, rows_at(i), pa_stride, b, b_step, c + i * ldc, ldc, last, accumulate, ep, row0 + i,
         col0);
  }
  if (i < m) {
    kernels[(m - i - 1) * T::kNv + (nv - 1)](kc, rows_at(i), pa_stride, b, b_step, c + i * ldc, ldc,
                                             last, accumulate, ep, row0 + i, col0);
  }
}

// --- packing -------------------------------------------------------------------------------------

// out rows [0, 8) (out_stride apart) = the transpose of the 8 x 8 block whose rows start at in
// (in_stride apart). AVX only, so every ISA's unit has it.
inline void transpose8x8(const float* in, int64_t in_stride, float* out, int64_t out_stride) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(in + i * in_stride);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(out + i * out_stride, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
    _mm256_storeu_ps(out + (i + 4) * out_stride, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
  }
}

// A(i, p) = a[i * rs + p * cs] for rows [0, m) and depths [k0, k0 + kc) into MR-row panels of kc
// steps (panel stride kc * MR), rows past m zero: a convolution's weights at build time, and a
// GEMM's A at run time when it is not row-major (GemmPlan::direct_a() reads a row-major A in
// place: element by element, AVX2's 6-row panels were 8.6% of ViT-Tiny). Whole 8-row panels of
// row-major A go 8 x 8 blocks at a time through transpose8x8.
template <class T>
void pack_a_panels(const float* a, int64_t rs, int64_t cs, int64_t m, int64_t k0, int64_t kc,
                   float* out) {
  constexpr int64_t kMr = T::kMr;
  for (int64_t i = 0; i < m; i += kMr) {
    const int64_t rows = min64(kMr, m - i);
    float* d = out + (i / kMr) * kc * kMr;
    int64_t p = 0;
    if (kMr == 8 && rows == 8 && cs == 1) {
      for (; p + 8 <= kc; p += 8) transpose8x8(a + i * rs + k0 + p, rs, d + p * kMr, kMr);
    }
    for (; p < kc; ++p) {
      const float* src = a + i * rs + (k0 + p) * cs;
      float* dp = d + p * kMr;
      int64_t r = 0;
      for (; r < rows; ++r) dp[r] = src[r * rs];
      for (; r < kMr; ++r) dp[r] = 0.0f;
    }
  }
}

// B(p, j) = b[p * rs + j * cs] for all k depths into NR-column panels (panel stride k * NR),
// columns past n zero. A transposed B (rs 1: a Gemm's transB weights, an attention's keys) goes
// 8 x 8 blocks at a time through transpose8x8.
template <class T>
void pack_b_panels(const float* b, int64_t rs, int64_t cs, int64_t k, int64_t n, float* out) {
  constexpr int64_t kNr = T::kNv * T::kLanes;
  for (int64_t j = 0; j < n; j += kNr) {
    const int64_t cols = min64(kNr, n - j);
    float* panel = out + (j / kNr) * k * kNr;
    int64_t p = 0;
    if (rs == 1 && cs != 1) {
      for (; p + 8 <= k; p += 8) {
        int64_t q = 0;
        for (; q + 8 <= cols; q += 8) {
          transpose8x8(b + p + (j + q) * cs, cs, panel + p * kNr + q, kNr);
        }
        for (int64_t pp = p; pp < p + 8; ++pp) {
          float* d = panel + pp * kNr;
          for (int64_t qq = q; qq < cols; ++qq) d[qq] = b[pp + (j + qq) * cs];
          for (int64_t qq = cols; qq < kNr; ++qq) d[qq] = 0.0f;
        }
      }
    }
    for (float* d = panel + p * kNr; p < k; ++p, d += kNr) {
      const float* src = b + p * rs + j * cs;
      int64_t q = 0;
      if (cs == 1) {
        std::memcpy(d, src, static_cast<size_t>(cols) * sizeof(float));
        q = cols;
      }
      for (; q < cols; ++q) d[q] = src[q * cs];
      for (; q < kNr; ++q) d[q] = 0.0f;
    }
  }
}

// --- GEMM with prepacked B -----------------------------------------------------------------------

// A task is one (row block, column block) of C; for each depth block its rows of A are packed
// into this thread's scratch, then every column panel runs against them. TB: B's element type
// (float, or uint16_t binary16 bits: gemm_run_f16).
template <class T, class TB>
void gemm_tasks(const GemmPlan& pl, const float* a, const TB* packed_b, const Epilogue& ep,
                float* c, float* scratch, int64_t begin, int64_t end) {
  constexpr int64_t kMr = T::kMr;
  constexpr int64_t kNr = T::kNv * T::kLanes;
  const FlushDenormals ftz;
  // With one depth block, the tasks of a row block (consecutive: columns go fastest) share its
  // packed A (a transposed A; a row-major one is read in place), instead of packing it once per
  // column block.
  const bool one_depth_block = pl.k <= pl.bl.kc;
  int64_t packed_m0 = -1;
  for (int64_t t = begin; t < end; ++t) {
    const int64_t m0 = (t / pl.n_blocks) * pl.mc;
    const int64_t n0 = (t % pl.n_blocks) * pl.nc;
    const int64_t rows = min64(pl.mc, pl.m - m0);
    const int64_t cols = min64(pl.nc, pl.n - n0);
    for (int64_t k0 = 0; k0 == 0 || k0 < pl.k; k0 += pl.bl.kc) {  // k = 0: one empty block
      const int64_t kc = min64(pl.bl.kc, pl.k - k0);
      const bool last = k0 + kc >= pl.k;
      if (!pl.direct_a() && (!one_depth_block || m0 != packed_m0)) {
        pack_a_panels<T>(a + m0 * pl.a_rs, pl.a_rs, pl.a_cs, rows, k0, kc, scratch);
        packed_m0 = m0;
      }
      for (int64_t j = 0; j < cols; j += kNr) {
        const TB* b = packed_b + ((n0 + j) / kNr) * pl.k * kNr + k0 * kNr;
        const int64_t w = min64(kNr, cols - j);
        float* cj = c + m0 * pl.ldc + n0 + j;
        const Epilogue* ep_last = last ? &ep : nullptr;
        if (pl.direct_a()) {
          column_panel<T, TB, true>(kc, rows, w, a + m0 * pl.a_rs + k0, pl.a_rs, b, cj, pl.ldc,
                                    k0 > 0, ep_last, m0, n0 + j);
        } else {
          column_panel<T, TB>(kc, rows, w, scratch, kc * kMr, b, cj, pl.ldc, k0 > 0, ep_last, m0,
                              n0 + j);
        }
      }
    }
  }
}

}  // namespace
}  // namespace kiln::kernels::x86
