#include "base/half_convert.h"

#include "base/cpu_features.h"
#include "kiln/half.h"

namespace kiln {

void halves_to_floats_portable(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = Half::half_bits_to_float(src[i]);
}

void floats_to_halves_portable(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = Half::float_to_half_bits(src[i]);
}

bool f16c_available() {
#if defined(__x86_64__)
  static const bool available = has_feature(host_cpu_features(), CpuFeature::kAvx) &&
                                has_feature(host_cpu_features(), CpuFeature::kF16c);
  return available;
#else
  return false;
#endif
}

void halves_to_floats(const uint16_t* src, float* dst, int64_t n) {
  if (f16c_available()) return halves_to_floats_f16c(src, dst, n);
  halves_to_floats_portable(src, dst, n);
}

void floats_to_halves(const float* src, uint16_t* dst, int64_t n) {
  if (f16c_available()) return floats_to_halves_f16c(src, dst, n);
  floats_to_halves_portable(src, dst, n);
}

Tensor widen_half(const Tensor& f16) {
  Tensor out(DType::kF32, f16.dims());
  halves_to_floats(static_cast<const uint16_t*>(f16.raw_data()), out.data<float>(), f16.numel());
  return out;
}

Tensor narrow_to_half(const Tensor& f32) {
  Tensor out(DType::kF16, f32.dims());
  floats_to_halves(f32.data<float>(), static_cast<uint16_t*>(out.raw_data()), f32.numel());
  return out;
}

}  // namespace kiln
