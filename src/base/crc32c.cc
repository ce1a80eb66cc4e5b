#include "base/crc32c.h"

#include <array>
#include <bit>
#include <cstring>

#include "base/cpu_features.h"
#include "base/crc32c_internal.h"

namespace kiln {
namespace {

using crc32c_internal::mul_x;

// kTables[0] advances the register by one byte; kTables[k][b] is byte b followed by k zero bytes,
// so eight lookups advance it by eight bytes at once (slicing-by-8).
using SliceTables = std::array<std::array<uint32_t, 256>, 8>;

constexpr SliceTables make_slice_tables() {
  SliceTables t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int i = 0; i < 8; ++i) c = mul_x(c);
    t[0][b] = c;
  }
  for (size_t k = 1; k < t.size(); ++k) {
    for (size_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xffu];
  }
  return t;
}

constexpr SliceTables kTables = make_slice_tables();

uint32_t load_le32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap32(v);
  return v;
}

// Raw register update (no pre/post inversion).
uint32_t update_bytes(uint32_t c, const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i) c = (c >> 8) ^ kTables[0][(c ^ p[i]) & 0xffu];
  return c;
}

}  // namespace

uint32_t crc32c_extend_portable(uint32_t crc, const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t c = ~crc;
  for (; size >= 8; p += 8, size -= 8) {
    const uint32_t lo = c ^ load_le32(p);
    const uint32_t hi = load_le32(p + 4);
    c = kTables[7][lo & 0xffu] ^ kTables[6][(lo >> 8) & 0xffu] ^ kTables[5][(lo >> 16) & 0xffu] ^
        kTables[4][lo >> 24] ^ kTables[3][hi & 0xffu] ^ kTables[2][(hi >> 8) & 0xffu] ^
        kTables[1][(hi >> 16) & 0xffu] ^ kTables[0][hi >> 24];
  }
  return ~update_bytes(c, p, size);
}

bool crc32c_sse42_available() {
#if defined(__x86_64__)
  static const bool available = has_feature(host_cpu_features(), CpuFeature::kSse4_2);
  return available;
#else
  return false;
#endif
}

uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size) {
  return crc32c_sse42_available() ? crc32c_extend_sse42(crc, data, size)
                                  : crc32c_extend_portable(crc, data, size);
}

uint32_t crc32c(const void* data, size_t size) { return crc32c_extend(0, data, size); }

}  // namespace kiln
