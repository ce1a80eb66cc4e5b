#pragma once
// Byte positions of the engine file's header and section-table fields (docs/engine_format.md) and
// little-endian accessors, shared by the writer and the reader.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace kiln::engine::layout {

// Header. The fields up to and including kKilnVersion keep their place and meaning in every
// format version, so any kiln can tell a damaged file from one in another format.
inline constexpr size_t kMagic = 0;              // char[8]
inline constexpr size_t kFormatVersion = 8;      // u32
inline constexpr size_t kHeaderSize = 12;        // u32
inline constexpr size_t kFileSize = 16;          // u64
inline constexpr size_t kRequiredFeatures = 24;  // u64
inline constexpr size_t kTableOffset = 32;       // u64
inline constexpr size_t kSectionCount = 40;      // u32
inline constexpr size_t kEntrySize = 44;         // u32
inline constexpr size_t kChecksum = 48;          // u32
inline constexpr size_t kReserved0 = 52;         // u32, zero
inline constexpr size_t kKilnVersion = 56;       // char[48], NUL-padded
inline constexpr size_t kReserved1 = 104;        // 24 bytes, zero
inline constexpr size_t kStablePrefix = 104;     // bytes every format version lays out alike

// Section table entry.
inline constexpr size_t kEntryName = 0;        // char[16], NUL-padded
inline constexpr size_t kEntryOffset = 16;     // u64, from the start of the file
inline constexpr size_t kEntrySizeField = 24;  // u64
inline constexpr size_t kEntryAlignment = 32;  // u32
inline constexpr size_t kEntryReserved = 36;   // 12 bytes, zero

inline uint64_t get_le(std::span<const std::byte> b, size_t at, size_t width) {
  uint64_t v = 0;
  for (size_t i = 0; i < width; ++i) v |= uint64_t{std::to_integer<uint8_t>(b[at + i])} << (8 * i);
  return v;
}
inline uint32_t get_le32(std::span<const std::byte> b, size_t at) {
  return static_cast<uint32_t>(get_le(b, at, 4));
}
inline uint64_t get_le64(std::span<const std::byte> b, size_t at) { return get_le(b, at, 8); }

inline void put_le(std::string& s, size_t at, uint64_t v, size_t width) {
  for (size_t i = 0; i < width; ++i) s[at + i] = static_cast<char>((v >> (8 * i)) & 0xffu);
}
inline void put_le32(std::string& s, size_t at, uint32_t v) { put_le(s, at, v, 4); }
inline void put_le64(std::string& s, size_t at, uint64_t v) { put_le(s, at, v, 8); }

}  // namespace kiln::engine::layout
