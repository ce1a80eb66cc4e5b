// The SSE4.2 crc32 instruction. Only these functions are compiled for SSE4.2 (target attribute),
// so the rest of kiln keeps the baseline ISA; crc32c.cc calls them only when the CPU has SSE4.2.

#include <array>
#include <cstring>

#include "base/crc32c.h"
#include "base/crc32c_internal.h"

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace kiln {

#if defined(__x86_64__)
namespace {

namespace ci = crc32c_internal;

// One crc32 instruction has a latency of ~3 cycles but a throughput of one per cycle, so three
// independent streams over adjacent blocks keep the unit busy. The streams are joined with
// crc(A B) = crc(A) * x^(8|B|) ^ crc(B) (raw registers); the multiplication by the constant is
// linear in the register, hence four table lookups, one per register byte.
struct ShiftTables {
  std::array<std::array<uint32_t, 256>, 4> t{};
};

constexpr ShiftTables make_shift_tables(uint64_t bytes) {
  const uint32_t factor = ci::x_pow_8n(bytes);
  ShiftTables s;
  for (uint32_t k = 0; k < 4; ++k) {
    for (uint32_t b = 0; b < 256; ++b) s.t[k][b] = ci::mul(b << (8 * k), factor);
  }
  return s;
}

constexpr size_t kLongBlock = 8192;  // bytes per stream; 24 KiB per round
constexpr size_t kShortBlock = 256;  // for what the long rounds leave; 768 bytes per round
constexpr ShiftTables kLongShift = make_shift_tables(kLongBlock);
constexpr ShiftTables kShortShift = make_shift_tables(kShortBlock);

uint32_t shift(const ShiftTables& s, uint32_t c) {
  return s.t[0][c & 0xffu] ^ s.t[1][(c >> 8) & 0xffu] ^ s.t[2][(c >> 16) & 0xffu] ^ s.t[3][c >> 24];
}

uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <size_t kBlock>
__attribute__((target("sse4.2"))) uint64_t three_way(uint64_t c, const uint8_t*& p, size_t& size,
                                                     const ShiftTables& tables) {
  while (size >= 3 * kBlock) {
    uint64_t c0 = c, c1 = 0, c2 = 0;
    for (size_t i = 0; i < kBlock; i += 8) {
      c0 = _mm_crc32_u64(c0, load64(p + i));
      c1 = _mm_crc32_u64(c1, load64(p + kBlock + i));
      c2 = _mm_crc32_u64(c2, load64(p + 2 * kBlock + i));
    }
    c = shift(tables, static_cast<uint32_t>(c0)) ^ static_cast<uint32_t>(c1);
    c = shift(tables, static_cast<uint32_t>(c)) ^ static_cast<uint32_t>(c2);
    p += 3 * kBlock;
    size -= 3 * kBlock;
  }
  return c;
}

}  // namespace

__attribute__((target("sse4.2"))) uint32_t crc32c_extend_sse42(uint32_t crc, const void* data,
                                                               size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t c = ~crc;
  for (; size > 0 && (reinterpret_cast<uintptr_t>(p) & 7u) != 0; ++p, --size) {
    c = _mm_crc32_u8(static_cast<uint32_t>(c), *p);
  }
  c = three_way<kLongBlock>(c, p, size, kLongShift);
  c = three_way<kShortBlock>(c, p, size, kShortShift);
  for (; size >= 8; p += 8, size -= 8) c = _mm_crc32_u64(c, load64(p));
  for (; size > 0; ++p, --size) c = _mm_crc32_u8(static_cast<uint32_t>(c), *p);
  return ~static_cast<uint32_t>(c);
}

#else

// Never called: crc32c_sse42_available() is false off x86-64.
uint32_t crc32c_extend_sse42(uint32_t crc, const void* data, size_t size) {
  return crc32c_extend_portable(crc, data, size);
}

#endif

}  // namespace kiln
