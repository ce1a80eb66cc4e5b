#include "kernels/ref/quantize.h"

#include <algorithm>
#include <cmath>

#include "kernels/ref/math_util.h"

namespace kiln::kernels::ref {
namespace {

int64_t param_index(const QuantParams& p, int64_t i) {
  return p.axis_size == 1 ? 0 : (i / p.inner) % p.axis_size;
}

}  // namespace

template <typename TY>
void quantize_linear(const QuantParams& p, const float* x, const float* scale, const TY* zero,
                     TY* y) {
  for (int64_t i = 0; i < p.numel; ++i) {
    const int64_t c = param_index(p, i);
    const float q = x[i] / scale[c];
    const double zp = zero == nullptr ? 0.0 : static_cast<double>(zero[c]);
    // Round the quotient first, then add the (integer) zero point: the order matters on ties.
    y[i] = std::isnan(q) ? round_saturate<TY>(zp)
                         : round_saturate<TY>(std::nearbyint(static_cast<double>(q)) + zp);
  }
}

template <typename TX>
void dequantize_linear(const QuantParams& p, const TX* x, const float* scale, const TX* zero,
                       float* y) {
  for (int64_t i = 0; i < p.numel; ++i) {
    const int64_t c = param_index(p, i);
    const int64_t zp = zero == nullptr ? 0 : static_cast<int64_t>(zero[c]);
    y[i] = static_cast<float>(static_cast<int64_t>(x[i]) - zp) * scale[c];
  }
}

void dynamic_quantize_linear(int64_t numel, const float* x, uint8_t* y, float* scale,
                             uint8_t* zero) {
  float lo = 0.0f;
  float hi = 0.0f;
  for (int64_t i = 0; i < numel; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  const float s = (hi - lo) / 255.0f;
  *scale = s;
  if (s == 0.0f) {
    *zero = 0;
    std::fill(y, y + numel, uint8_t{0});
    return;
  }
  const float initial_zero = std::clamp(0.0f - lo / s, 0.0f, 255.0f);
  *zero = round_saturate<uint8_t>(static_cast<double>(initial_zero));
  const QuantParams p{numel, 1, 1};
  quantize_linear<uint8_t>(p, x, scale, zero, y);
}

#define KILN_INSTANTIATE(T)                                                                       \
  template void quantize_linear<T>(const QuantParams&, const float*, const float*, const T*, T*); \
  template void dequantize_linear<T>(const QuantParams&, const T*, const float*, const T*, float*);
KILN_INSTANTIATE(uint8_t)
KILN_INSTANTIATE(int8_t)
KILN_INSTANTIATE(uint16_t)
KILN_INSTANTIATE(int16_t)
#undef KILN_INSTANTIATE
template void dequantize_linear<int32_t>(const QuantParams&, const int32_t*, const float*,
                                         const int32_t*, float*);

}  // namespace kiln::kernels::ref
