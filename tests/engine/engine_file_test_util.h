#pragma once
// Helpers for the engine file tests: byte patching and a checksum written from the spec
// (docs/engine_format.md), independent of the code under test.

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>

#include "engine/engine_file.h"

namespace kiln::engine::testing {

inline uint64_t get_le(std::string_view s, size_t at, size_t width) {
  uint64_t v = 0;
  for (size_t i = 0; i < width; ++i) v |= uint64_t{static_cast<uint8_t>(s[at + i])} << (8 * i);
  return v;
}

inline void put_le(std::string& s, size_t at, uint64_t v, size_t width) {
  for (size_t i = 0; i < width; ++i) s[at + i] = static_cast<char>(v >> (8 * i));
}

// CRC-32C from its definition (a byte table built bit by bit), over every byte except the
// checksum field at 48..51.
inline uint32_t spec_checksum(std::string_view file) {
  static const auto table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t b = 0; b < 256; ++b) {
      uint32_t c = b;
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1u) != 0 ? 0x82F63B78u : 0u);
      t[b] = c;
    }
    return t;
  }();
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < file.size(); ++i) {
    if (i >= 48 && i < 52) continue;
    c = (c >> 8) ^ table[(c ^ static_cast<uint8_t>(file[i])) & 0xffu];
  }
  return ~c;
}

// Makes the checksum match again after a test edited the bytes on purpose.
inline void reseal(std::string& file) { put_le(file, 48, spec_checksum(file), 4); }

inline std::string random_text(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

inline Result<EngineFile> parse(std::string bytes, const ReadOptions& options = {}) {
  return parse_engine_file(std::make_shared<const std::string>(std::move(bytes)), "test.plan",
                           options);
}

// Parsing fails with `code` and a message naming the file and containing `fragment`.
inline void expect_error(const Result<EngineFile>& r, StatusCode code, std::string_view fragment,
                         std::string_view source = "test.plan") {
  ASSERT_FALSE(r.is_ok()) << "loaded, but expected " << status_code_name(code) << " '" << fragment
                          << "'";
  EXPECT_EQ(r.status().code(), code) << r.status().to_string();
  EXPECT_NE(r.status().message().find(source), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find(fragment), std::string::npos) << r.status().message();
}

}  // namespace kiln::engine::testing
