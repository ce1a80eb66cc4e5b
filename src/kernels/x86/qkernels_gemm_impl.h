#pragma once
// The INT8 GEMM behind qkernels.h over an INT8 traits type Q: Y [m x n] = A [m x k] (uint8) x
// B [k x n] (int8), lanes along Y's columns. B is packed once into NR-column panels of depth quads
// (the depth padded with zeros), followed by its column sums (padded to whole panels); a task's
// rows of A are packed into MR-row panels of quads in the thread's scratch. Each row's quad is
// broadcast against the panel's vectors of B.

#include "kernels/x86/qkernels_conv_impl.h"

namespace kiln::kernels::x86 {
namespace {

template <class Q>
void qgemm_pack_b_impl(const int8_t* b, int64_t k, int64_t n, uint8_t* packed) {
  constexpr int64_t kL = Q::kLanes, kNr = Q::kNv * kL;
  const int64_t kq = qceil(k, 4), panels = qceil(n, kNr);
  uint8_t* d = packed;
  int8_t block[kL * 4];
  for (int64_t panel = 0; panel < panels; ++panel) {
    for (int64_t q = 0; q < kq; ++q) {
      for (int64_t v = 0; v < Q::kNv; ++v, d += Q::kGemmVecBytes) {
        for (int64_t l = 0; l < kL; ++l) {
          const int64_t col = panel * kNr + v * kL + l;
          for (int64_t t = 0; t < 4; ++t) {
            const int64_t row = q * 4 + t;
            block[l * 4 + t] = col < n && row < k ? b[row * n + col] : int8_t{0};
          }
        }
        Q::pack_gemm_vec(block, d);
      }
    }
  }
  auto* sums = reinterpret_cast<int32_t*>(packed + qround64(d - packed));
  for (int64_t col = 0; col < panels * kNr; ++col) {
    int32_t s = 0;
    for (int64_t row = 0; col < n && row < k; ++row) s += b[row * n + col];
    sums[col] = s;
  }
}

// Rows [0, rows) of A (row stride k) into MR-row panels of kq quads (4 bytes each), the depth
// tail and missing rows zero.
template <class Q>
void qgemm_pack_a(const uint8_t* a, int64_t k, int64_t rows, uint8_t* dst) {
  constexpr int64_t kMr = Q::kMr;
  const int64_t kq = qceil(k, 4), full = k / 4;
  for (int64_t i0 = 0; i0 < rows; i0 += kMr) {
    uint8_t* panel = dst + (i0 / kMr) * kq * kMr * 4;
    for (int64_t r = 0; r < kMr; ++r) {
      const int64_t i = i0 + r;
      uint8_t* d = panel + r * 4;
      if (i >= rows) {
        for (int64_t q = 0; q < kq; ++q) std::memset(d + q * kMr * 4, 0, 4);
        continue;
      }
      const uint8_t* src = a + i * k;
      for (int64_t q = 0; q < full; ++q) std::memcpy(d + q * kMr * 4, src + q * 4, 4);
      if (full < kq) {
        uint8_t tail[4] = {0, 0, 0, 0};
        std::memcpy(tail, src + full * 4, static_cast<size_t>(k - full * 4));
        std::memcpy(d + full * kMr * 4, tail, 4);
      }
    }
  }
}

// The columns of a panel: their sums, scales and biases, Y's element of (row 0, column 0), Y's
// row stride, and the lanes of the last vector.
struct QCols {
  const int32_t* csum;
  const float* w_scale;
  const float* bias;  // may be null
  int64_t base, ldy;
  int last_lanes;
};

template <class Q>
using QGemmUkernelFn = void (*)(int64_t kq, const uint8_t* a, const uint8_t* b, const QCols& cols,
                                const QOut<Q>& o);

// The depth loop of qgemm_ukernel (its own function for the reason qconv_depth_loop is): R rows x
// NV vectors of accumulators, started at -a_zero * column sums, over kq quads.
template <class Q, int R, int NV>
__attribute__((noinline)) void qgemm_depth_loop(int64_t kq, const uint8_t* a, const uint8_t* b,
                                                const int32_t* csum, int32_t a_zero,
                                                typename Q::I* out) {
  using I = typename Q::I;
  constexpr int kL = Q::kLanes;
  I acc[R][NV];
  const I zero = Q::set1(a_zero);
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) {
    const I start = Q::sub(Q::set1(0), Q::mullo(zero, Q::load(csum + v * kL)));
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) acc[r][v] = start;
  }
  for (int64_t q = 0; q < kq; ++q, a += Q::kMr * 4, b += Q::kNv * Q::kGemmVecBytes) {
    typename Q::GB bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = Q::gemm_b(b + v * Q::kGemmVecBytes);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const typename Q::GA ar = Q::gemm_a(static_cast<uint32_t>(Q::load32(a + r * 4)));
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = Q::gemm_dot(acc[r][v], ar, bv[v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) Q::store(out + r * NV + v, acc[r][v]);
  }
}

template <class Q, int R, int NV>
void qgemm_ukernel(int64_t kq, const uint8_t* a, const uint8_t* b, const QCols& cols,
                   const QOut<Q>& o) {
  using F = typename Q::F;
  constexpr int kL = Q::kLanes;
  alignas(64) typename Q::I done[R * NV];
  qgemm_depth_loop<Q, R, NV>(kq, a, b, cols.csum, o.e->in_zero, done);
  const typename F::V in_scale = F::set1(o.e->in_scale);
  q_finish<Q, R * NV>(
      o, done, [&](auto&& fn) __attribute__((always_inline)) {
        for (int v = 0; v < NV; ++v) {
          const int lanes = v == NV - 1 ? cols.last_lanes : kL;
          const typename F::V scale =
              o.scaled(F::mul(in_scale, Q::load_f32(cols.w_scale + v * kL, 0, lanes, F::zero())));
          const typename F::V bias = o.bias(
              cols.bias != nullptr ? o.scaled(Q::load_f32(cols.bias + v * kL, 0, lanes, F::zero()))
                                   : F::zero());
          const QSeg seg{0, lanes, 0};
          for (int r = 0; r < R; ++r) {
            fn(r * NV + v, scale, bias, seg, cols.base + r * cols.ldy + v * kL);
          }
        }
      });
}

template <class Q, int... I>
constexpr auto make_qgemm_table(std::integer_sequence<int, I...>) {
  return std::array<QGemmUkernelFn<Q>, sizeof...(I)>{
      &qgemm_ukernel<Q, I / Q::kNv + 1, I % Q::kNv + 1>...};
}

template <class Q>
inline constexpr auto kQGemmUkernels =
    make_qgemm_table<Q>(std::make_integer_sequence<int, Q::kMr * Q::kNv>{});

// A task is one (row block, column block) of Y: its rows of A are packed once per run of tasks
// of that row block, then every column panel of the block runs against them.
template <class Q>
void qgemm_tasks(const QGemmPlan& pl, const uint8_t* a, const uint8_t* packed, const QEpilogue& ep,
                 void* y, uint8_t* scratch, int64_t begin, int64_t end) {
  constexpr int64_t kMr = Q::kMr, kNr = Q::kNv * Q::kLanes;
  const FlushDenormals ftz;
  const QOut<Q> o(ep, y);
  const int64_t b_panel = pl.kq * Q::kNv * Q::kGemmVecBytes;
  const auto* csum =
      reinterpret_cast<const int32_t*>(packed + qround64(qceil(pl.n, kNr) * b_panel));
  int64_t packed_m0 = -1;  // the tasks of a row block are consecutive and share its packed rows
  for (int64_t t = begin; t < end; ++t) {
    const int64_t m0 = (t / pl.n_blocks) * pl.mc, n0 = (t % pl.n_blocks) * pl.nc;
    const int64_t rows = min64(pl.mc, pl.m - m0), cols = min64(pl.nc, pl.n - n0);
    if (m0 != packed_m0) qgemm_pack_a<Q>(a + m0 * pl.k, pl.k, rows, scratch);
    packed_m0 = m0;
    for (int64_t j = n0; j < n0 + cols; j += kNr) {
      const int64_t w = min64(kNr, n0 + cols - j), nv = qceil(w, Q::kLanes);
      QCols c{csum + j,      ep.w_scale + j, ep.bias != nullptr ? ep.bias + j : nullptr,
              m0 * pl.n + j, pl.n,           static_cast<int>(w - (nv - 1) * Q::kLanes)};
      for (int64_t i = 0; i < rows; i += kMr) {
        const int64_t r = min64(kMr, rows - i);
        QCols ci = c;
        ci.base += i * pl.n;
        kQGemmUkernels<Q>[(r - 1) * Q::kNv + (nv - 1)](pl.kq, scratch + (i / kMr) * pl.kq * kMr * 4,
                                                       packed + (j / kNr) * b_panel, ci, o);
      }
    }
  }
}

}  // namespace
}  // namespace kiln::kernels::x86
