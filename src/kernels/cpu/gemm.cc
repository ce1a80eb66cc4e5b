#include "kernels/cpu/gemm.h"

#include <algorithm>

#include "base/int_math.h"

namespace kiln::kernels::cpu {
namespace {

constexpr int64_t kMr = kGemmMr;
constexpr int64_t kNr = kGemmNr;
// Block sizes: a KC x NR panel of B (8 KiB) stays in L1 while the MC x KC block of A (96 KiB)
// streams from L2; the KC x NC block of B (256 KiB) lives in L2/L3. Multiples of MR and NR so that
// block offsets into whole packed matrices fall on panel boundaries.
constexpr int64_t kKc = 256;
constexpr int64_t kMc = 96;
constexpr int64_t kNc = 256;
static_assert(kMc % kMr == 0 && kNc % kNr == 0);

// Panels of `width` lanes: out[panel][p][lane] = element(panel * width + lane, p), zero beyond
// `rows`. For A the lanes are rows (element = A(i, p)); for B they are columns (B(p, j)).
template <int64_t kWidth>
void pack_panels(const float* data, int64_t lane_stride, int64_t depth_stride, int64_t lanes,
                 int64_t depth, float* out) {
  for (int64_t l0 = 0; l0 < lanes; l0 += kWidth) {
    const int64_t w = std::min(kWidth, lanes - l0);
    const float* src = data + l0 * lane_stride;
    if (w == kWidth && lane_stride == 1) {
      for (int64_t p = 0; p < depth; ++p) {
        const float* s = src + p * depth_stride;
        for (int64_t l = 0; l < kWidth; ++l) out[p * kWidth + l] = s[l];
      }
    } else if (depth_stride == 1) {  // each lane is contiguous along depth: read it in order
      for (int64_t l = 0; l < w; ++l) {
        const float* s = src + l * lane_stride;
        for (int64_t p = 0; p < depth; ++p) out[p * kWidth + l] = s[p];
      }
      for (int64_t p = 0; p < depth; ++p) {
        for (int64_t l = w; l < kWidth; ++l) out[p * kWidth + l] = 0.0f;
      }
    } else {
      for (int64_t p = 0; p < depth; ++p) {
        const float* s = src + p * depth_stride;
        for (int64_t l = 0; l < w; ++l) out[p * kWidth + l] = s[l * lane_stride];
        for (int64_t l = w; l < kWidth; ++l) out[p * kWidth + l] = 0.0f;
      }
    }
    out += depth * kWidth;
  }
}

// acc = sum over p < kc of a[p][0..MR) (outer) b[p][0..NR).
void micro_kernel(int64_t kc, const float* a, const float* b, float (&acc)[kMr][kNr]) {
  float t[kMr][kNr] = {};
  for (int64_t p = 0; p < kc; ++p) {
    const float* ap = a + p * kMr;
    const float* bp = b + p * kNr;
    for (int64_t i = 0; i < kMr; ++i) {
      const float av = ap[i];
      for (int64_t j = 0; j < kNr; ++j) t[i][j] += av * bp[j];
    }
  }
  for (int64_t i = 0; i < kMr; ++i) {
    for (int64_t j = 0; j < kNr; ++j) acc[i][j] = t[i][j];
  }
}

// Where one macro block's operands and outputs are.
struct Block {
  int64_t i0, j0;      // top-left of the block in y
  int64_t mc, nc, kc;  // extents
  const float* a;      // first MR panel of A for this block
  int64_t a_stride;    // floats between consecutive A panels
  const float* b;
  int64_t b_stride;
  bool first, last;  // first / last KC block: apply the epilogue / the activation
};

// The first KC block writes alpha * acc plus the biases and the addend (reading each addend element
// before writing the y element it may alias: an in-place residual); later blocks add alpha * acc.
void store_tile(const GemmShape& s, const GemmEpilogue& ep, const Block& blk, int64_t i0,
                int64_t j0, int64_t mr, int64_t nr, const float (&acc)[kMr][kNr], float* y) {
  const float alpha = s.alpha;
  for (int64_t i = 0; i < mr; ++i) {
    const int64_t row = i0 + i;
    float* yr = y + row * s.ldy + j0;
    const float* acc_row = acc[i];
    if (!blk.first) {
      for (int64_t j = 0; j < nr; ++j) yr[j] += alpha * acc_row[j];
      continue;
    }
    const float rb = ep.row_bias != nullptr ? ep.row_bias[row] : 0.0f;
    float v[kNr];
    for (int64_t j = 0; j < nr; ++j) v[j] = alpha * acc_row[j] + rb;
    if (ep.col_bias != nullptr) {
      const float* cb = ep.col_bias + j0;
      for (int64_t j = 0; j < nr; ++j) v[j] += cb[j];
    }
    if (ep.addend != nullptr) {
      const float* ad = ep.addend + row * ep.addend_rs + j0 * ep.addend_cs;
      const int64_t cs = ep.addend_cs;
      const float scale = ep.addend_scale;
      if (cs == 1) {
        for (int64_t j = 0; j < nr; ++j) v[j] += scale * ad[j];
      } else {
        for (int64_t j = 0; j < nr; ++j) v[j] += scale * ad[j * cs];
      }
    }
    for (int64_t j = 0; j < nr; ++j) yr[j] = v[j];
  }
}

void macro_kernel(const GemmShape& s, const GemmEpilogue& ep, const Block& blk, float* y) {
  float acc[kMr][kNr];
  for (int64_t jr = 0; jr < blk.nc; jr += kNr) {
    const float* bp = blk.b + (jr / kNr) * blk.b_stride;
    const int64_t nr = std::min(kNr, blk.nc - jr);
    for (int64_t ir = 0; ir < blk.mc; ir += kMr) {
      micro_kernel(blk.kc, blk.a + (ir / kMr) * blk.a_stride, bp, acc);
      store_tile(s, ep, blk, blk.i0 + ir, blk.j0 + jr, std::min(kMr, blk.mc - ir), nr, acc, y);
    }
  }
  if (blk.last && ep.activate != nullptr) {
    for (int64_t i = 0; i < blk.mc; ++i) {
      ep.activate(y + (blk.i0 + i) * s.ldy + blk.j0, blk.nc, ep.activate_ctx);
    }
  }
}

}  // namespace

size_t gemm_packed_a_floats(int64_t m, int64_t k) {
  return static_cast<size_t>(round_up(m, kMr) * k);
}

size_t gemm_packed_b_floats(int64_t k, int64_t n) {
  return static_cast<size_t>(round_up(n, kNr) * k);
}

void gemm_pack_a(MatrixRef a, int64_t m, int64_t k, float* out) {
  pack_panels<kMr>(a.data, a.rs, a.cs, m, k, out);
}

void gemm_pack_b(MatrixRef b, int64_t k, int64_t n, float* out) {
  pack_panels<kNr>(b.data, b.cs, b.rs, n, k, out);
}

size_t gemm_scratch_floats(const GemmShape& s, bool a_packed, bool b_packed) {
  const int64_t kc = std::min(kKc, s.k);
  size_t n = 0;
  if (!a_packed) n += static_cast<size_t>(std::min(round_up(s.m, kMr), kMc) * kc);
  if (!b_packed) n += static_cast<size_t>(std::min(round_up(s.n, kNr), kNc) * kc);
  return n;
}

void gemm(const GemmShape& s, const GemmOperand& a, const GemmOperand& b, float* y,
          const GemmEpilogue& ep, float* scratch) {
  if (s.m <= 0 || s.n <= 0) return;
  float* a_buf = scratch;
  float* b_buf =
      scratch + (a.packed != nullptr ? 0 : std::min(round_up(s.m, kMr), kMc) * std::min(kKc, s.k));
  // k == 0 still runs one (empty) KC block so that the epilogue writes y.
  const int64_t k_blocks = std::max<int64_t>(1, (s.k + kKc - 1) / kKc);
  for (int64_t jc = 0; jc < s.n; jc += kNc) {
    const int64_t nc = std::min(kNc, s.n - jc);
    for (int64_t kb = 0; kb < k_blocks; ++kb) {
      const int64_t pc = kb * kKc;
      Block blk{};
      blk.j0 = jc;
      blk.nc = nc;
      blk.kc = std::min(kKc, s.k - pc);
      blk.first = kb == 0;
      blk.last = kb == k_blocks - 1;
      if (b.packed != nullptr) {
        blk.b = b.packed + jc * s.k + pc * kNr;
        blk.b_stride = s.k * kNr;
      } else {
        const MatrixRef& v = b.view;
        pack_panels<kNr>(v.data + pc * v.rs + jc * v.cs, v.cs, v.rs, nc, blk.kc, b_buf);
        blk.b = b_buf;
        blk.b_stride = blk.kc * kNr;
      }
      for (int64_t ic = 0; ic < s.m; ic += kMc) {
        blk.i0 = ic;
        blk.mc = std::min(kMc, s.m - ic);
        if (a.packed != nullptr) {
          blk.a = a.packed + ic * s.k + pc * kMr;
          blk.a_stride = s.k * kMr;
        } else {
          const MatrixRef& v = a.view;
          pack_panels<kMr>(v.data + ic * v.rs + pc * v.cs, v.rs, v.cs, blk.mc, blk.kc, a_buf);
          blk.a = a_buf;
          blk.a_stride = blk.kc * kMr;
        }
        macro_kernel(s, ep, blk, y);
      }
    }
  }
}

}  // namespace kiln::kernels::cpu
