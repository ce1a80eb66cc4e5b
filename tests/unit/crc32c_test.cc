// CRC-32C: published check values, and both implementations against a bit-at-a-time oracle written
// from the definition.

#include "base/crc32c.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace kiln {
namespace {

// One bit at a time from the definition: reflected polynomial 0x82F63B78, init and xorout ~0.
uint32_t crc32c_bitwise(const uint8_t* p, size_t n) {
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1u) != 0 ? 0x82F63B78u : 0u);
  }
  return ~c;
}

using Impl = uint32_t (*)(uint32_t, const void*, size_t);

std::vector<std::pair<const char*, Impl>> implementations() {
  std::vector<std::pair<const char*, Impl>> impls = {{"portable", crc32c_extend_portable},
                                                     {"dispatch", crc32c_extend}};
  if (crc32c_sse42_available()) impls.emplace_back("sse42", crc32c_extend_sse42);
  return impls;
}

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (uint8_t& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

TEST(Crc32c, KnownAnswers) {
  // RFC 3720 (iSCSI) appendix B.4 and the usual "123456789" check value.
  std::string zeros(32, '\0'), ones(32, '\xff'), up(32, '\0'), down(32, '\0');
  for (int i = 0; i < 32; ++i) {
    up[i] = static_cast<char>(i);
    down[i] = static_cast<char>(31 - i);
  }
  for (const auto& [name, impl] : implementations()) {
    SCOPED_TRACE(name);
    EXPECT_EQ(impl(0, "", 0), 0u);
    EXPECT_EQ(impl(0, "123456789", 9), 0xE3069283u);
    EXPECT_EQ(impl(0, zeros.data(), 32), 0x8A9136AAu);
    EXPECT_EQ(impl(0, ones.data(), 32), 0x62A8AB43u);
    EXPECT_EQ(impl(0, up.data(), 32), 0x46DD794Eu);
    EXPECT_EQ(impl(0, down.data(), 32), 0x113FDB5Cu);
  }
  EXPECT_EQ(crc32c(std::string_view("123456789")), 0xE3069283u);
}

TEST(Crc32c, EveryShortLengthAndAlignmentMatchesTheDefinition) {
  const std::vector<uint8_t> buf = random_bytes(300 + 8, 1);
  for (const auto& [name, impl] : implementations()) {
    for (size_t offset = 0; offset < 8; ++offset) {
      for (size_t n = 0; n <= 300; ++n) {
        ASSERT_EQ(impl(0, buf.data() + offset, n), crc32c_bitwise(buf.data() + offset, n))
            << name << " length " << n << " offset " << offset;
      }
    }
  }
}

TEST(Crc32c, LongBuffersCrossEveryBlockPath) {
  // The SSE4.2 version runs 3 x 8 KiB rounds, then 3 x 256-byte rounds, then words and bytes.
  const std::vector<uint8_t> buf = random_bytes(200000, 2);
  for (size_t n :
       {767u, 768u, 769u, 24575u, 24576u, 24577u, 24576u + 768u + 13u, 49999u, 199993u}) {
    for (size_t offset : {0u, 3u}) {
      const uint32_t want = crc32c_bitwise(buf.data() + offset, n);
      for (const auto& [name, impl] : implementations()) {
        EXPECT_EQ(impl(0, buf.data() + offset, n), want)
            << name << " length " << n << " offset " << offset;
      }
    }
  }
}

TEST(Crc32c, ExtendContinuesAChecksum) {
  const std::vector<uint8_t> buf = random_bytes(30000, 3);
  const uint32_t whole = crc32c_bitwise(buf.data(), buf.size());
  for (const auto& [name, impl] : implementations()) {
    for (size_t split : {0u, 1u, 7u, 8u, 4096u, 25000u, 30000u}) {
      const uint32_t head = impl(0, buf.data(), split);
      EXPECT_EQ(impl(head, buf.data() + split, buf.size() - split), whole)
          << name << " split at " << split;
    }
  }
}

}  // namespace
}  // namespace kiln
