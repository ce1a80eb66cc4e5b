#pragma once
// Cache-blocked single-precision GEMM with a fused epilogue:
//
//   y[i, j] = act(alpha * sum_p A(i, p) * B(p, j) + row_bias[i] + col_bias[j]
//                 + addend_scale * addend(i, j))
//
// A is m x k and B is k x n, each either a strided view (any transposition) or packed beforehand
// with pack_a / pack_b (constant weights are packed once, at build or load time). y is row-major
// with row stride ldy. Blocking follows the usual scheme: B is packed in KC x NC blocks of NR-wide
// column panels, A in MC x KC blocks of MR-high row panels, and an MR x NR register tile
// accumulates over KC; the epilogue runs on each tile after its last KC block, and the activation
// on each row segment of an MC x NC block, while they are in cache.
//
// Single-threaded; no allocation: the caller provides gemm_scratch_floats() floats of scratch.

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/epilogue.h"

namespace kiln::kernels::cpu {

inline constexpr int64_t kGemmMr = 4;  // rows of the register tile
inline constexpr int64_t kGemmNr = 8;  // columns of the register tile

// Element (i, j) is data[i * rs + j * cs]: row-major is {data, ld, 1}, its transpose {data, 1, ld}.
// A stride may be 0 (a broadcast row or column).
struct MatrixRef {
  const float* data = nullptr;
  int64_t rs = 0;
  int64_t cs = 1;
};

// An operand: the strided view, or (when `packed` is set) the whole matrix as pack_a / pack_b
// wrote it, which takes precedence.
struct GemmOperand {
  MatrixRef view;
  const float* packed = nullptr;
};

struct GemmEpilogue {
  const float* row_bias = nullptr;  // [m], may be null
  const float* col_bias = nullptr;  // [n], may be null
  // addend(i, j) = addend[i * addend_rs + j * addend_cs]: Gemm's C (strides 0 where it
  // broadcasts) or a residual of y's shape. May be null.
  const float* addend = nullptr;
  int64_t addend_rs = 0;
  int64_t addend_cs = 0;
  float addend_scale = 1.0f;
  ActivateFn activate = nullptr;  // null: identity
  const void* activate_ctx = nullptr;
};

struct GemmShape {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  float alpha = 1.0f;
  int64_t ldy = 0;  // >= n
};

// Floats pack_a writes for an m x k matrix (rows padded to a multiple of kGemmMr).
size_t gemm_packed_a_floats(int64_t m, int64_t k);
// Floats pack_b writes for a k x n matrix (columns padded to a multiple of kGemmNr).
size_t gemm_packed_b_floats(int64_t k, int64_t n);
void gemm_pack_a(MatrixRef a, int64_t m, int64_t k, float* out);
void gemm_pack_b(MatrixRef b, int64_t k, int64_t n, float* out);

// Scratch gemm() needs for this shape, given which operands come packed.
size_t gemm_scratch_floats(const GemmShape& s, bool a_packed, bool b_packed);

// y = the formula above. Every element of y[0..m) x [0..n) is written; y's prior contents are not
// used (unless the addend is y).
void gemm(const GemmShape& s, const GemmOperand& a, const GemmOperand& b, float* y,
          const GemmEpilogue& ep, float* scratch);

}  // namespace kiln::kernels::cpu
