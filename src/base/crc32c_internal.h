#pragma once
// GF(2) arithmetic modulo the CRC-32C polynomial, shared by the table and the SSE4.2
// implementations. Values use the reflected bit order of the CRC register: bit 31 holds the x^0
// coefficient and bit 0 the x^31 coefficient.

#include <cstdint>

namespace kiln::crc32c_internal {

inline constexpr uint32_t kPoly = 0x82F63B78u;  // x^32 + ... , reflected, x^32 implied

// a * x mod P: one zero bit through the CRC register.
constexpr uint32_t mul_x(uint32_t a) { return (a >> 1) ^ ((a & 1u) != 0 ? kPoly : 0u); }

// a * b mod P.
constexpr uint32_t mul(uint32_t a, uint32_t b) {
  uint32_t product = 0;
  for (int i = 0; i < 32; ++i) {
    if (((a >> (31 - i)) & 1u) != 0) product ^= b;
    b = mul_x(b);
  }
  return product;
}

// x^(8 * bytes) mod P: the factor by which `bytes` zero bytes advance the CRC register.
constexpr uint32_t x_pow_8n(uint64_t bytes) {
  uint32_t r = 0x80000000u;  // x^0
  for (uint64_t i = 0; i < 8 * bytes; ++i) r = mul_x(r);
  return r;
}

}  // namespace kiln::crc32c_internal
