// Bulk binary16 <-> float32 conversions: every binary16 value widened and a spread of float32 bit
// patterns narrowed, by each implementation, against Half's scalar conversions (which other tests
// check against the definition); NaNs need only stay NaNs of the same sign. Every length up to a
// few vectors, so that the 8-wide loop's tail is covered and nothing past n is written.

#include "base/half_convert.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kiln/half.h"

namespace kiln {
namespace half_convert_test {

using Widen = void (*)(const uint16_t*, float*, int64_t);
using Narrow = void (*)(const float*, uint16_t*, int64_t);

struct Impl {
  const char* name;
  Widen widen;
  Narrow narrow;
};

std::vector<Impl> implementations() {
  std::vector<Impl> impls = {{"portable", halves_to_floats_portable, floats_to_halves_portable},
                             {"dispatch", halves_to_floats, floats_to_halves}};
  if (f16c_available()) impls.push_back({"f16c", halves_to_floats_f16c, floats_to_halves_f16c});
  return impls;
}

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

bool half_is_nan(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }

TEST(HalfConvert, WidensEveryBinary16Value) {
  std::vector<uint16_t> halves(65536);
  for (uint32_t h = 0; h < 65536; ++h) halves[h] = static_cast<uint16_t>(h);
  for (const Impl& impl : implementations()) {
    std::vector<float> out(halves.size());
    impl.widen(halves.data(), out.data(), static_cast<int64_t>(halves.size()));
    int wrong = 0;
    for (uint32_t h = 0; h < 65536 && wrong < 5; ++h) {
      const float want = Half::half_bits_to_float(static_cast<uint16_t>(h));
      const bool ok = half_is_nan(static_cast<uint16_t>(h))
                          ? std::isnan(out[h]) && std::signbit(out[h]) == std::signbit(want)
                          : float_bits(out[h]) == float_bits(want);
      if (!ok) {
        ++wrong;
        ADD_FAILURE() << impl.name << ": binary16 0x" << std::hex << h << " widened to 0x"
                      << float_bits(out[h]) << ", expected 0x" << float_bits(want);
      }
    }
  }
}

// Every 251st float32 bit pattern (all exponents, signs and rounding positions), the values around
// binary16's overflow, subnormal and halfway boundaries, and the infinities and NaNs.
std::vector<float> narrowing_inputs() {
  std::vector<float> v;
  for (uint64_t u = 0; u <= 0xffffffffu; u += 251)
    v.push_back(bits_float(static_cast<uint32_t>(u)));
  for (float f : {65504.0f, 65519.99f, 65520.0f, 65536.0f, 5.9604645e-8f, 2.9802322e-8f,
                  2.9802326e-8f, 6.1035156e-5f, 6.1028998e-5f, 1.0009766f, 1.0004883f, 1.0014648f,
                  0.0f, -0.0f, 1.0f / 0.0f, -1.0f / 0.0f}) {
    v.push_back(f);
    v.push_back(-f);
  }
  v.push_back(bits_float(0x7fc00000u));
  v.push_back(bits_float(0xff800001u));
  v.push_back(bits_float(0x7f80e000u));
  return v;
}

TEST(HalfConvert, NarrowsToNearestEvenAsHalf) {
  const std::vector<float> in = narrowing_inputs();
  for (const Impl& impl : implementations()) {
    std::vector<uint16_t> out(in.size());
    impl.narrow(in.data(), out.data(), static_cast<int64_t>(in.size()));
    int wrong = 0;
    for (size_t i = 0; i < in.size() && wrong < 5; ++i) {
      const uint16_t want = Half::float_to_half_bits(in[i]);
      const bool ok = std::isnan(in[i]) ? half_is_nan(out[i]) && (out[i] >> 15) == (want >> 15)
                                        : out[i] == want;
      if (!ok) {
        ++wrong;
        ADD_FAILURE() << impl.name << ": float32 0x" << std::hex << float_bits(in[i])
                      << " narrowed to 0x" << out[i] << ", expected 0x" << want;
      }
    }
  }
}

TEST(HalfConvert, EveryLengthConvertsItsValuesAndWritesNothingPast) {
  for (const Impl& impl : implementations()) {
    for (int64_t n = 0; n <= 27; ++n) {
      std::vector<float> f(static_cast<size_t>(n) + 1, -7.0f);
      std::vector<uint16_t> h(static_cast<size_t>(n) + 1, 0xabcd);
      std::vector<float> src(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i)
        src[static_cast<size_t>(i)] = 0.25f * static_cast<float>(i) - 3.0f;
      impl.narrow(src.data(), h.data(), n);
      impl.widen(h.data(), f.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        EXPECT_EQ(f[static_cast<size_t>(i)], src[static_cast<size_t>(i)])
            << impl.name << " n=" << n;
      }
      EXPECT_EQ(h.back(), 0xabcd) << impl.name << " n=" << n;
      EXPECT_EQ(f.back(), -7.0f) << impl.name << " n=" << n;
    }
  }
}

}  // namespace half_convert_test
}  // namespace kiln
