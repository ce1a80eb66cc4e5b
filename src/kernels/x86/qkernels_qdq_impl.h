#pragma once
// Per-tensor QuantizeLinear and DequantizeLinear behind qkernels.h over an INT8 traits type Q:
// streaming loops, a vector of lanes at a time, the tail masked. No denormal flushing here: the
// results must match the reference bit for bit, denormal inputs included.

#include "kernels/x86/qkernels_common.h"

namespace kiln::kernels::x86 {
namespace {

template <class Q>
void quantize_impl(const float* x, float scale, int32_t zero, bool is_signed, void* y,
                   int64_t begin, int64_t end) {
  using F = typename Q::F;
  constexpr int64_t kL = Q::kLanes;
  const int32_t qmin = is_signed ? -128 : 0, qmax = is_signed ? 127 : 255;
  const typename F::V s = F::set1(scale);
  const typename F::V lo = F::set1(static_cast<float>(qmin - zero));
  const typename F::V hi = F::set1(static_cast<float>(qmax - zero));
  const typename Q::I z = Q::set1(zero);
  for (int64_t i = begin; i < end; i += kL) {
    const int n = static_cast<int>(min64(kL, end - i));
    const typename F::V v = Q::load_f32(x + i, 0, n, F::zero());
    const typename Q::I q = Q::quantize(v, s, lo, hi, z);
    if (is_signed) {
      Q::store_i8(static_cast<int8_t*>(y) + i, q, 0, n);
    } else {
      Q::store_u8(static_cast<uint8_t*>(y) + i, q, 0, n);
    }
  }
}

template <class Q>
void dequantize_impl(const void* x, float scale, int32_t zero, bool is_signed, float* y,
                     int64_t begin, int64_t end) {
  using F = typename Q::F;
  constexpr int64_t kL = Q::kLanes;
  const typename F::V s = F::set1(scale);
  const typename Q::I z = Q::set1(zero);
  for (int64_t i = begin; i < end; i += kL) {
    const int n = static_cast<int>(min64(kL, end - i));
    const typename Q::I q = is_signed ? Q::load_i8(static_cast<const int8_t*>(x) + i, 0, n)
                                      : Q::load_u8(static_cast<const uint8_t*>(x) + i, 0, n, z);
    Q::store_f32(y + i, F::mul(Q::to_float(Q::sub(q, z)), s), 0, n);
  }
}

}  // namespace
}  // namespace kiln::kernels::x86
