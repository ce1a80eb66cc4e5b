#pragma once
// Reference matrix products: numpy MatMul with batch broadcasting, Gemm, and the integer /
// quantized variants (MatMulInteger, QLinearMatMul).

#include <cstdint>
#include <vector>

namespace kiln::kernels::ref {

// out[batch..., m, n] = sum_k a[batch_a..., m, k] * b[batch_b..., k, n]. The batch dims of a and b
// broadcast (numpy rules) to out_batch. 1-D operands are expressed by the caller as m = 1 or n = 1.
struct MatMulShape {
  std::vector<int64_t> a_batch;
  std::vector<int64_t> b_batch;
  std::vector<int64_t> out_batch;
  int64_t m = 0;
  int64_t k = 0;
  int64_t n = 0;
};

// Floating types accumulate in double; integer types in 64 bits and wrap to T.
template <typename T>
void matmul(const MatMulShape& shape, const T* a, const T* b, T* out);

// y[m, n] = alpha * op(a) * op(b) + beta * c, op = optional transpose; a is [m, k] or [k, m]
// (trans_a), b is [k, n] or [n, k] (trans_b). c (may be null) has c_dims of rank 0..2 that
// broadcast to [m, n].
struct GemmParams {
  int64_t m = 0;
  int64_t k = 0;
  int64_t n = 0;
  bool trans_a = false;
  bool trans_b = false;
  float alpha = 1.0f;
  float beta = 1.0f;
  std::vector<int64_t> c_dims;
};

template <typename T>
void gemm(const GemmParams& p, const T* a, const T* b, const T* c, T* y);

// MatMulInteger: out = (a - a_zero) * (b - b_zero) in int32 arithmetic. a_zero has 1 element
// (per-tensor) or m elements (per-row); b_zero has 1 or n (per-column). Either may be null (zero).
struct ZeroPoints {
  const void* a = nullptr;
  int64_t a_count = 0;
  const void* b = nullptr;
  int64_t b_count = 0;
};

template <typename TA, typename TB>
void matmul_integer(const MatMulShape& shape, const TA* a, const TB* b, const ZeroPoints& zero,
                    int32_t* out);

// QLinearMatMul: y = saturate(round_half_even(acc * a_scale * b_scale / y_scale) + y_zero), with
// acc the MatMulInteger result. Scales are per-tensor (count 1) or per-row of a / per-column of b.
struct QLinearScales {
  const float* a = nullptr;
  int64_t a_count = 1;
  const float* b = nullptr;
  int64_t b_count = 1;
  float y = 1.0f;
};

template <typename TA, typename TB, typename TY>
void qlinear_matmul(const MatMulShape& shape, const TA* a, const TB* b, const ZeroPoints& zero,
                    const QLinearScales& scales, TY y_zero, TY* y);

}  // namespace kiln::kernels::ref
