#include "kernels/ref/qconv.h"

#include <cmath>
#include <vector>

namespace kiln::kernels::ref {
namespace {

int64_t product(const std::vector<int64_t>& v) {
  int64_t n = 1;
  for (int64_t d : v) n *= d;
  return n;
}

}  // namespace

uint8_t requantize_u8(float v, float y_scale, int32_t y_zero) {
  const float q = v / y_scale;
  if (std::isnan(q)) return static_cast<uint8_t>(y_zero);
  // Round the quotient first, then add the integer zero point, as QuantizeLinear does.
  const double r = std::nearbyint(static_cast<double>(q)) + static_cast<double>(y_zero);
  if (r <= 0.0) return 0;
  if (r >= 255.0) return 255;
  return static_cast<uint8_t>(r);
}

void quant_epilogue(const QuantEpilogue& e, const int32_t* acc, int64_t count, int64_t first,
                    int64_t channel, int64_t channel_step, void* y) {
  for (int64_t i = 0; i < count; ++i) {
    const int64_t c = channel + i * channel_step;
    const int64_t at = first + i;
    const float scale = e.in_scale * e.w_scale[c];
    float v = static_cast<float>(acc[i]) * scale;
    if (e.bias != nullptr) v = v + e.bias[c];
    if (e.z_f32 != nullptr) v = v + e.z_f32[at];
    if (e.z_u8 != nullptr) {
      v = v + static_cast<float>(static_cast<int32_t>(e.z_u8[at]) - e.z_zero) * e.z_scale;
    }
    v = apply_activation(e.act, v);
    if (e.out_u8) {
      static_cast<uint8_t*>(y)[at] = requantize_u8(v, e.y_scale, e.y_zero);
    } else {
      static_cast<float*>(y)[at] = v;
    }
  }
}

void qconv(const ConvParams& p, const QuantEpilogue& e, const uint8_t* x, const int8_t* w,
           void* y) {
  const int64_t plane = product(p.out_dims);
  std::vector<int32_t> acc(static_cast<size_t>(p.batch * p.out_channels * plane));
  ConvZeroPoints zero;
  zero.x = e.in_zero;
  conv_integer<uint8_t, int8_t>(p, zero, x, w, acc.data());
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t m = 0; m < p.out_channels; ++m) {
      const int64_t first = (n * p.out_channels + m) * plane;
      quant_epilogue(e, acc.data() + first, plane, first, m, 0, y);
    }
  }
}

void qgemm(int64_t m, int64_t k, int64_t n, const QuantEpilogue& e, const uint8_t* a,
           const int8_t* b, void* y) {
  std::vector<int32_t> acc(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      // |(a - zero) * b| <= 255 * 128: an int64 sum is exact; it wraps to int32 like a 32-bit
      // accumulator (the op's shape function keeps k small enough that it never does).
      int64_t s = 0;
      for (int64_t p = 0; p < k; ++p) {
        s += (static_cast<int64_t>(a[i * k + p]) - e.in_zero) * static_cast<int64_t>(b[p * n + j]);
      }
      acc[static_cast<size_t>(j)] = static_cast<int32_t>(s);
    }
    quant_epilogue(e, acc.data(), n, i * n, 0, 1, y);
  }
}

}  // namespace kiln::kernels::ref
