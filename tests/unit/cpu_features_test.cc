// CPU feature names, parsing, the ISA cap and the consistency of what this machine reports. Which
// features the machine has is not asserted: the tests run on any x86-64 CI machine.

#include "base/cpu_features.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>

namespace kiln {
namespace {

constexpr bool is_subset(CpuFeatureSet a, CpuFeatureSet b) { return (a & ~b) == 0; }

// Sets KILN_MAX_ISA for one test and restores the previous value.
class ScopedMaxIsa {
 public:
  explicit ScopedMaxIsa(const char* value) {
    if (const char* old = std::getenv(kMaxIsaEnv)) old_ = old;
    ::setenv(kMaxIsaEnv, value, 1);
  }
  ~ScopedMaxIsa() {
    if (old_) {
      ::setenv(kMaxIsaEnv, old_->c_str(), 1);
    } else {
      ::unsetenv(kMaxIsaEnv);
    }
  }

 private:
  std::optional<std::string> old_;
};

TEST(CpuFeatures, NamesAreDistinctAndParseBack) {
  std::set<std::string> names;
  for (int bit = 0; bit < 15; ++bit) {
    const auto f = static_cast<CpuFeature>(uint64_t{1} << bit);
    const std::string name(cpu_feature_name(f));
    EXPECT_NE(name, "unknown") << "bit " << bit;
    EXPECT_TRUE(names.insert(name).second) << name << " is used twice";
    Result<CpuFeatureSet> parsed = parse_cpu_features(name);
    ASSERT_TRUE(parsed.is_ok()) << parsed.status().to_string();
    EXPECT_EQ(*parsed, uint64_t{1} << bit) << name;
  }
  EXPECT_EQ(cpu_feature_name(static_cast<CpuFeature>(uint64_t{1} << 15)), "unknown");
  EXPECT_EQ(cpu_feature_name(static_cast<CpuFeature>(CpuFeature::kAvx | CpuFeature::kAvx2)),
            "unknown");
  EXPECT_EQ(cpu_feature_name(CpuFeature{0}), "unknown");
}

TEST(CpuFeatures, BitPositionsAreTheFileFormats) {
  // docs/engine_format.md lists these bits; an engine written by any kiln depends on them.
  EXPECT_EQ(to_set(CpuFeature::kSse4_2), 1u);
  EXPECT_EQ(to_set(CpuFeature::kAvx2), 4u);
  EXPECT_EQ(to_set(CpuFeature::kAvx512f), 32u);
  EXPECT_EQ(to_set(CpuFeature::kAvx512Vnni), 512u);
  EXPECT_EQ(to_set(CpuFeature::kAmxBf16), uint64_t{1} << 14);
  EXPECT_EQ(cpu_feature_name(CpuFeature::kAvx512Vnni), "avx512_vnni");
  EXPECT_EQ(cpu_feature_name(CpuFeature::kAmxTile), "amx_tile");
}

TEST(CpuFeatures, ToStringListsInBitOrder) {
  EXPECT_EQ(cpu_features_to_string(0), "");
  EXPECT_EQ(
      cpu_features_to_string(CpuFeature::kAvx512Vnni | CpuFeature::kSse4_2 | CpuFeature::kAvx2),
      "sse4_2 avx2 avx512_vnni");
  EXPECT_EQ(cpu_features_to_string(kIsaAvx2), "sse4_2 avx avx2 fma f16c");
  EXPECT_EQ(
      cpu_features_to_string(to_set(CpuFeature::kFma) | (uint64_t{1} << 47) | (uint64_t{1} << 63)),
      "fma bit47 bit63");
}

TEST(CpuFeatures, ParseAcceptsSpacesAndCommas) {
  Result<CpuFeatureSet> s = parse_cpu_features(" avx2,fma , avx512f\tf16c ");
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  EXPECT_EQ(*s, CpuFeature::kAvx2 | CpuFeature::kFma | CpuFeature::kAvx512f | CpuFeature::kF16c);
  EXPECT_EQ(parse_cpu_features("").value(), 0u);
  EXPECT_EQ(parse_cpu_features(" , ").value(), 0u);
  Result<CpuFeatureSet> all = parse_cpu_features(cpu_features_to_string(kKnownCpuFeatures));
  ASSERT_TRUE(all.is_ok());
  EXPECT_EQ(*all, kKnownCpuFeatures);
}

TEST(CpuFeatures, ParseRejectsUnknownNames) {
  for (const char* text : {"avx3", "AVX2", "avx2 sse5", "bit47", "avx512"}) {
    Result<CpuFeatureSet> s = parse_cpu_features(text);
    ASSERT_FALSE(s.is_ok()) << text;
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.status().message().find("unknown CPU feature"), std::string::npos);
  }
  EXPECT_NE(parse_cpu_features("avx2 sse5").status().message().find("'sse5'"), std::string::npos);
}

TEST(CpuFeatures, CapsNestAndStayWithinTheirLevel) {
  const CpuFeatureSet detected = detected_cpu_features();
  const CpuFeatureSet sse = cpu_features_with_cap("sse4_2").value();
  const CpuFeatureSet avx2 = cpu_features_with_cap("avx2").value();
  const CpuFeatureSet avx512 = cpu_features_with_cap("avx512").value();
  const CpuFeatureSet vnni = cpu_features_with_cap("avx512_vnni").value();
  const CpuFeatureSet native = cpu_features_with_cap("native").value();
  EXPECT_EQ(native, detected);
  EXPECT_EQ(cpu_features_with_cap("").value(), detected);
  EXPECT_TRUE(is_subset(sse, avx2));
  EXPECT_TRUE(is_subset(avx2, avx512));
  EXPECT_TRUE(is_subset(avx512, vnni));
  EXPECT_TRUE(is_subset(vnni, native));
  EXPECT_TRUE(is_subset(sse, to_set(CpuFeature::kSse4_2)));
  EXPECT_TRUE(is_subset(avx2, CpuFeature::kSse4_2 | CpuFeature::kAvx | CpuFeature::kAvx2 |
                                  CpuFeature::kFma | CpuFeature::kF16c));
  EXPECT_FALSE(has_feature(avx512, CpuFeature::kAvx512Vnni));
  EXPECT_FALSE(has_feature(vnni, CpuFeature::kAvx512Bf16));
  EXPECT_FALSE(has_feature(vnni, CpuFeature::kAmxTile));
  // A cap removes only what is above it.
  EXPECT_EQ(avx2, detected & kIsaAvx2);
  EXPECT_EQ(vnni, detected & kIsaAvx512Vnni);
}

TEST(CpuFeatures, UnknownCapIsAnError) {
  Result<CpuFeatureSet> r = cpu_features_with_cap("avx1024");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("'avx1024'"), std::string::npos);
  EXPECT_NE(r.status().message().find("avx512_vnni"), std::string::npos) << "lists valid values";
}

TEST(CpuFeatures, EnvironmentCap) {
  {
    ScopedMaxIsa cap("sse4_2");
    EXPECT_EQ(isa_cap_from_env(), "sse4_2");
    EXPECT_EQ(cpu_features_from_env().value(), detected_cpu_features() & kIsaSse4_2);
  }
  {
    ScopedMaxIsa cap("");
    EXPECT_EQ(isa_cap_from_env(), "native");
    EXPECT_EQ(cpu_features_from_env().value(), detected_cpu_features());
  }
  ScopedMaxIsa cap("avx9");
  Result<CpuFeatureSet> r = cpu_features_from_env();
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("KILN_MAX_ISA=avx9"), std::string::npos)
      << r.status().message();
}

TEST(CpuFeatures, DetectionIsConsistent) {
  const CpuFeatureSet d = detected_cpu_features();
  EXPECT_TRUE(is_subset(d, kKnownCpuFeatures));
  EXPECT_TRUE(is_subset(host_cpu_features(), d));
  const auto implies = [d](CpuFeature a, CpuFeature b) {
    return !has_feature(d, a) || has_feature(d, b);
  };
  for (CpuFeature f :
       {CpuFeature::kAvx2, CpuFeature::kFma, CpuFeature::kF16c, CpuFeature::kAvx512f}) {
    EXPECT_TRUE(implies(f, CpuFeature::kAvx)) << cpu_feature_name(f) << " without OS AVX state";
  }
  for (CpuFeature f : {CpuFeature::kAvx512bw, CpuFeature::kAvx512vl, CpuFeature::kAvx512dq,
                       CpuFeature::kAvx512Vnni, CpuFeature::kAvx512Bf16, CpuFeature::kAvx512Fp16}) {
    EXPECT_TRUE(implies(f, CpuFeature::kAvx512f)) << cpu_feature_name(f);
  }
  EXPECT_TRUE(implies(CpuFeature::kAmxInt8, CpuFeature::kAmxTile));
  EXPECT_TRUE(implies(CpuFeature::kAmxBf16, CpuFeature::kAmxTile));
}

// Linux lists the features it found (and enabled) in /proc/cpuinfo under the names kiln uses: an
// independent check of the cpuid and xgetbv decoding.
TEST(CpuFeatures, DetectionAgreesWithLinux) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line) && line.rfind("flags", 0) != 0) {
  }
  if (line.rfind("flags", 0) != 0) GTEST_SKIP() << "no /proc/cpuinfo flags line";
  std::set<std::string> flags;
  std::istringstream words(line.substr(line.find(':') + 1));
  for (std::string w; words >> w;) flags.insert(w);
  const CpuFeatureSet d = detected_cpu_features();
  for (int bit = 0; bit < 15; ++bit) {
    const auto f = static_cast<CpuFeature>(uint64_t{1} << bit);
    const std::string name(cpu_feature_name(f));
    EXPECT_EQ(has_feature(d, f), flags.count(name) == 1) << name;
  }
}

TEST(CpuFeatures, BrandStringIsTrimmed) {
  const std::string brand = cpu_brand_string();
  ASSERT_FALSE(brand.empty());
  EXPECT_NE(brand.front(), ' ');
  EXPECT_NE(brand.back(), ' ');
  EXPECT_EQ(brand.find('\0'), std::string::npos);
}

}  // namespace
}  // namespace kiln
