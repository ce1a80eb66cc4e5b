#pragma once
// IEEE 754 binary16 storage type with exact, portable conversions (round-to-nearest-even on the way
// in). Arithmetic happens in float; this type only stores.

#include <cstdint>
#include <cstring>

namespace kiln {

struct Half {
  uint16_t bits = 0;

  Half() = default;
  explicit Half(float f) : bits(float_to_half_bits(f)) {}
  operator float() const { return half_bits_to_float(bits); }  // NOLINT: implicit widening is exact

  static Half from_bits(uint16_t b) {
    Half h;
    h.bits = b;
    return h;
  }

  static float half_bits_to_float(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t out;
    if (exp == 0) {
      if (mant == 0) {
        out = sign;
      } else {  // subnormal: normalise
        exp = 127 - 15 + 1;
        while ((mant & 0x400u) == 0) {
          mant <<= 1;
          --exp;
        }
        mant &= 0x3ffu;
        out = sign | (exp << 23) | (mant << 13);
      }
    } else if (exp == 0x1f) {
      out = sign | 0x7f800000u | (mant << 13);
    } else {
      out = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &out, sizeof f);
    return f;
  }

  static uint16_t float_to_half_bits(float f) {
    uint32_t x;
    std::memcpy(&x, &f, sizeof x);
    const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
    const uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) {  // inf or nan
      return sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u);
    }
    if (absx >= 0x477ff000u) return sign | 0x7c00u;  // rounds to >= 65520: overflow to inf
    if (absx < 0x38800000u) {                        // result is subnormal or zero
      if (absx < 0x33000000u) return sign;           // below half the smallest subnormal
      const uint32_t e = absx >> 23;
      const uint32_t m = (absx & 0x7fffffu) | 0x800000u;
      const uint32_t shift = 126 - e;  // |f| / 2^-24 = m * 2^(e - 126); 14 <= shift <= 24
      const uint32_t rem = m & ((1u << shift) - 1);
      const uint32_t halfway = 1u << (shift - 1);
      uint32_t r = m >> shift;
      if (rem > halfway || (rem == halfway && (r & 1u))) ++r;
      return sign | static_cast<uint16_t>(r);
    }
    uint32_t r = absx - 0x38000000u;  // rebias exponent 127 -> 15
    const uint32_t rem = r & 0x1fffu;
    r >>= 13;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
    return sign | static_cast<uint16_t>(r);
  }
};

static_assert(sizeof(Half) == 2);

}  // namespace kiln
