#include "kernels/ref/matmul.h"

#include "base/half.h"
#include "kernels/ref/math_util.h"

namespace kiln::kernels::ref {
namespace {

// Calls fn(out_batch_index, a_offset, b_offset) for every output matrix, offsets in elements.
template <typename Fn>
void for_each_batch(const MatMulShape& s, Fn&& fn) {
  const std::vector<int64_t> a_off = broadcast_offsets(s.a_batch, s.out_batch);
  const std::vector<int64_t> b_off = broadcast_offsets(s.b_batch, s.out_batch);
  for (size_t i = 0; i < a_off.size(); ++i) {
    fn(static_cast<int64_t>(i), a_off[i] * s.m * s.k, b_off[i] * s.k * s.n);
  }
}

}  // namespace

template <typename T>
void matmul(const MatMulShape& s, const T* a, const T* b, T* out) {
  for_each_batch(s, [&](int64_t batch, int64_t a0, int64_t b0) {
    T* o = out + batch * s.m * s.n;
    for (int64_t i = 0; i < s.m; ++i) {
      for (int64_t j = 0; j < s.n; ++j) {
        Acc<T> acc{0};
        for (int64_t p = 0; p < s.k; ++p) {
          acc += to_acc(a[a0 + i * s.k + p]) * to_acc(b[b0 + p * s.n + j]);
        }
        o[i * s.n + j] = from_acc<T>(acc);
      }
    }
  });
}

namespace {

// Index into c (rank 0..2, broadcast to [m, n]) for output element (i, j).
int64_t gemm_c_index(const std::vector<int64_t>& c_dims, int64_t i, int64_t j) {
  if (c_dims.empty()) return 0;
  const int64_t cn = c_dims.back();
  const int64_t col = cn == 1 ? 0 : j;
  if (c_dims.size() == 1) return col;
  const int64_t row = c_dims[0] == 1 ? 0 : i;
  return row * cn + col;
}

}  // namespace

template <typename T>
void gemm(const GemmParams& p, const T* a, const T* b, const T* c, T* y) {
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < p.n; ++j) {
      Acc<T> acc{0};
      for (int64_t q = 0; q < p.k; ++q) {
        const T av = p.trans_a ? a[q * p.m + i] : a[i * p.k + q];
        const T bv = p.trans_b ? b[j * p.k + q] : b[q * p.n + j];
        acc += to_acc(av) * to_acc(bv);
      }
      double v = static_cast<double>(p.alpha) * static_cast<double>(acc);
      if (c != nullptr) {
        v += static_cast<double>(p.beta) * to_double(c[gemm_c_index(p.c_dims, i, j)]);
      }
      y[i * p.n + j] = from_acc<T>(v);
    }
  }
}

namespace {

template <typename T>
int32_t zero_at(const void* zero, int64_t count, int64_t index) {
  if (zero == nullptr) return 0;
  return static_cast<int32_t>(static_cast<const T*>(zero)[count == 1 ? 0 : index]);
}

// acc(i, j) of (a - a_zero) * (b - b_zero) for one matrix pair; a/b point at the matrices.
template <typename TA, typename TB>
int32_t integer_dot(const MatMulShape& s, const TA* a, const TB* b, const ZeroPoints& z, int64_t i,
                    int64_t j) {
  const int32_t za = zero_at<TA>(z.a, z.a_count, i);
  const int32_t zb = zero_at<TB>(z.b, z.b_count, j);
  int32_t acc = 0;
  for (int64_t p = 0; p < s.k; ++p) {
    acc +=
        (static_cast<int32_t>(a[i * s.k + p]) - za) * (static_cast<int32_t>(b[p * s.n + j]) - zb);
  }
  return acc;
}

}  // namespace

template <typename TA, typename TB>
void matmul_integer(const MatMulShape& s, const TA* a, const TB* b, const ZeroPoints& zero,
                    int32_t* out) {
  for_each_batch(s, [&](int64_t batch, int64_t a0, int64_t b0) {
    int32_t* o = out + batch * s.m * s.n;
    for (int64_t i = 0; i < s.m; ++i) {
      for (int64_t j = 0; j < s.n; ++j) o[i * s.n + j] = integer_dot(s, a + a0, b + b0, zero, i, j);
    }
  });
}

template <typename TA, typename TB, typename TY>
void qlinear_matmul(const MatMulShape& s, const TA* a, const TB* b, const ZeroPoints& zero,
                    const QLinearScales& sc, TY y_zero, TY* y) {
  for_each_batch(s, [&](int64_t batch, int64_t a0, int64_t b0) {
    TY* o = y + batch * s.m * s.n;
    for (int64_t i = 0; i < s.m; ++i) {
      const float sa = sc.a[sc.a_count == 1 ? 0 : i];
      for (int64_t j = 0; j < s.n; ++j) {
        const float sb = sc.b[sc.b_count == 1 ? 0 : j];
        const int32_t acc = integer_dot(s, a + a0, b + b0, zero, i, j);
        // The ONNX reference rescales in float32: acc * (sa * sb / sy).
        const float scaled = static_cast<float>(acc) * (sa * sb / sc.y);
        o[i * s.n + j] =
            round_saturate<TY>(static_cast<double>(scaled) + static_cast<double>(y_zero));
      }
    }
  });
}

#define KILN_INSTANTIATE(T)                                            \
  template void matmul<T>(const MatMulShape&, const T*, const T*, T*); \
  template void gemm<T>(const GemmParams&, const T*, const T*, const T*, T*);
KILN_REF_FOR_NUMERIC_TYPES(KILN_INSTANTIATE)
#undef KILN_INSTANTIATE

#define KILN_INSTANTIATE_INT(TA, TB)                                                              \
  template void matmul_integer<TA, TB>(const MatMulShape&, const TA*, const TB*,                  \
                                       const ZeroPoints&, int32_t*);                              \
  template void qlinear_matmul<TA, TB, uint8_t>(const MatMulShape&, const TA*, const TB*,         \
                                                const ZeroPoints&, const QLinearScales&, uint8_t, \
                                                uint8_t*);                                        \
  template void qlinear_matmul<TA, TB, int8_t>(const MatMulShape&, const TA*, const TB*,          \
                                               const ZeroPoints&, const QLinearScales&, int8_t,   \
                                               int8_t*);
KILN_INSTANTIATE_INT(uint8_t, uint8_t)
KILN_INSTANTIATE_INT(uint8_t, int8_t)
KILN_INSTANTIATE_INT(int8_t, uint8_t)
KILN_INSTANTIATE_INT(int8_t, int8_t)
#undef KILN_INSTANTIATE_INT

}  // namespace kiln::kernels::ref
