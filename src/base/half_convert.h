#pragma once
// Whole arrays between binary16 and float32: an FP16 engine's weights, widened when it loads and
// narrowed when it is built and saved (tens of millions of values; one at a time through Half they
// took most of an FP16 ResNet-50's load). F16C's vcvtph2ps / vcvtps2ph, 8 values an instruction,
// when host_cpu_features() has AVX and F16C; Half's portable conversions otherwise. Both give the
// same bits (ties to even, overflow to infinity) except for NaNs, which stay NaNs of the same sign
// but may carry different payloads.

#include <cstdint>

#include "base/tensor.h"

namespace kiln {

// dst[i] = the float32 value of binary16 src[i] (exact).
void halves_to_floats(const uint16_t* src, float* dst, int64_t n);
// dst[i] = src[i] rounded to the nearest binary16 (ties to even).
void floats_to_halves(const float* src, uint16_t* dst, int64_t n);

// A float16 tensor's values as a float32 tensor of the same dims (exact), and a float32 tensor's
// rounded to float16.
Tensor widen_half(const Tensor& f16);
Tensor narrow_to_half(const Tensor& f32);

// The implementations, for tests. The f16c ones must only be called when f16c_available().
void halves_to_floats_portable(const uint16_t* src, float* dst, int64_t n);
void floats_to_halves_portable(const float* src, uint16_t* dst, int64_t n);
void halves_to_floats_f16c(const uint16_t* src, float* dst, int64_t n);
void floats_to_halves_f16c(const float* src, uint16_t* dst, int64_t n);
bool f16c_available();

}  // namespace kiln
