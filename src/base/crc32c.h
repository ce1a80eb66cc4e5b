#pragma once
// CRC-32C (Castagnoli; reflected polynomial 0x82F63B78, initial value and final XOR 0xFFFFFFFF),
// the checksum of the engine file. Uses the SSE4.2 crc32 instruction when host_cpu_features() has
// sse4_2 and a slicing-by-8 table version otherwise; both give the same values.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace kiln {

// CRC-32C of data[0, size). crc32c("123456789") == 0xE3069283.
uint32_t crc32c(const void* data, size_t size);
inline uint32_t crc32c(std::string_view s) { return crc32c(s.data(), s.size()); }
inline uint32_t crc32c(std::span<const std::byte> s) { return crc32c(s.data(), s.size()); }

// Continues a checksum: crc32c_extend(crc32c(a), b) == crc32c(a followed by b), and
// crc32c_extend(0, b) == crc32c(b).
uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size);

// The two implementations, for tests and benchmarks. crc32c_extend_sse42 must only be called when
// crc32c_sse42_available().
uint32_t crc32c_extend_portable(uint32_t crc, const void* data, size_t size);
uint32_t crc32c_extend_sse42(uint32_t crc, const void* data, size_t size);
bool crc32c_sse42_available();

}  // namespace kiln
