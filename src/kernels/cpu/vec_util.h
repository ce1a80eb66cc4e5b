#pragma once
// Vectorizable building blocks shared by the cpu kernels: reductions written with independent lanes
// (a plain `s += x[i]` loop does not vectorize without -ffast-math, which would reorder every sum
// in the library) and an exp the compiler can inline into a vector loop.

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>

namespace kiln::kernels::cpu {

inline constexpr int64_t kLanes = 8;

inline float sum_f32(const float* x, int64_t n) {
  float lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] += x[i + l];
  }
  float s = 0.0f;
  for (int64_t l = 0; l < kLanes; ++l) s += lanes[l];
  for (; i < n; ++i) s += x[i];
  return s;
}

// Sum of (x[i] - c)^2.
inline float sum_sq_diff_f32(const float* x, int64_t n, float c) {
  float lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) {
      const float d = x[i + l] - c;
      lanes[l] += d * d;
    }
  }
  float s = 0.0f;
  for (int64_t l = 0; l < kLanes; ++l) s += lanes[l];
  for (; i < n; ++i) s += (x[i] - c) * (x[i] - c);
  return s;
}

// Largest element (lowest() for n == 0); NaNs are ignored, as every comparison with them is false.
inline float max_f32(const float* x, int64_t n) {
  float lanes[kLanes];
  std::fill(lanes, lanes + kLanes, std::numeric_limits<float>::lowest());
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] = lanes[l] < x[i + l] ? x[i + l] : lanes[l];
  }
  float m = std::numeric_limits<float>::lowest();
  for (int64_t l = 0; l < kLanes; ++l) m = m < lanes[l] ? lanes[l] : m;
  for (; i < n; ++i) m = m < x[i] ? x[i] : m;
  return m;
}

// e^x within about 2 ulp over the whole float range: inf above ln(FLT_MAX), 0 below the smallest
// denormal, NaN for NaN. Range reduction x = n ln2 + r with |r| <= ln2 / 2 (ln2 split in two so
// that n ln2 is exact), e^r by its Taylor series to degree 7 (truncation error below 1e-8), and 2^n
// applied as two halves so that neither scale factor leaves the normal range.
inline float exp_f32(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f;  // few mantissa bits: n * kLn2Hi is exact
  constexpr float kLn2Lo = -2.12194440e-4f;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  constexpr float kMax = 88.72283935f;   // ln(FLT_MAX)
  constexpr float kMin = -103.972084f;   // ln of the smallest denormal
  const bool nan = x != x;
  const float xc = nan ? 0.0f : std::min(std::max(x, kMin), kMax);
  const float n = (xc * kLog2e + kRound) - kRound;
  const float r = (xc - n * kLn2Hi) - n * kLn2Lo;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const auto ni = static_cast<int32_t>(n);
  const int32_t n1 = ni / 2;
  const int32_t n2 = ni - n1;
  const float s1 = std::bit_cast<float>((n1 + 127) << 23);
  const float s2 = std::bit_cast<float>((n2 + 127) << 23);
  float e = p * s1 * s2;
  e = x > kMax ? std::numeric_limits<float>::infinity() : e;
  e = x < kMin ? 0.0f : e;
  return nan ? x : e;
}

}  // namespace kiln::kernels::cpu
