#include "base/cpu_features.h"

#include <array>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define KILN_X86 1
#endif
#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace kiln {
namespace {

struct NamedFeature {
  CpuFeature feature;
  std::string_view name;
};

// In bit order; cpu_features_to_string relies on it.
constexpr std::array<NamedFeature, 15> kFeatureNames = {{
    {CpuFeature::kSse4_2, "sse4_2"},
    {CpuFeature::kAvx, "avx"},
    {CpuFeature::kAvx2, "avx2"},
    {CpuFeature::kFma, "fma"},
    {CpuFeature::kF16c, "f16c"},
    {CpuFeature::kAvx512f, "avx512f"},
    {CpuFeature::kAvx512bw, "avx512bw"},
    {CpuFeature::kAvx512vl, "avx512vl"},
    {CpuFeature::kAvx512dq, "avx512dq"},
    {CpuFeature::kAvx512Vnni, "avx512_vnni"},
    {CpuFeature::kAvx512Bf16, "avx512_bf16"},
    {CpuFeature::kAvx512Fp16, "avx512_fp16"},
    {CpuFeature::kAmxTile, "amx_tile"},
    {CpuFeature::kAmxInt8, "amx_int8"},
    {CpuFeature::kAmxBf16, "amx_bf16"},
}};
static_assert(kKnownCpuFeatures == (uint64_t{1} << kFeatureNames.size()) - 1);

struct IsaCap {
  std::string_view name;
  CpuFeatureSet allowed;
};
constexpr std::array<IsaCap, 5> kIsaCaps = {{
    {"sse4_2", kIsaSse4_2},
    {"avx2", kIsaAvx2},
    {"avx512", kIsaAvx512},
    {"avx512_vnni", kIsaAvx512Vnni},
    {"native", ~CpuFeatureSet{0}},
}};

#ifdef KILN_X86
struct CpuidRegs {
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};

CpuidRegs cpuid(uint32_t leaf, uint32_t subleaf) {
  CpuidRegs r;
  __cpuid_count(leaf, subleaf, r.eax, r.ebx, r.ecx, r.edx);
  return r;
}

// XCR0: which register states the OS saves on a context switch. Only valid when CPUID.1:ECX.OSXSAVE
// is set; the asm avoids needing -mxsave for _xgetbv.
uint64_t read_xcr0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t{hi} << 32) | lo;
}

constexpr bool bit(uint32_t reg, int n) { return ((reg >> n) & 1u) != 0; }

// Linux (5.16+) enables AMX tile data per process on request; without it the first tile
// instruction faults even though XCR0 lists the state.
bool request_amx_permission() {
#if defined(__linux__) && defined(__x86_64__)
  constexpr long kArchReqXcompPerm = 0x1023;
  constexpr long kXfeatureXtiledata = 18;
  return ::syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}

CpuFeatureSet detect() {
  const uint32_t max_leaf = cpuid(0, 0).eax;
  if (max_leaf < 1) return 0;
  const CpuidRegs l1 = cpuid(1, 0);
  CpuFeatureSet set = 0;
  auto add = [&set](bool present, CpuFeature f) {
    if (present) set |= to_set(f);
  };
  add(bit(l1.ecx, 20), CpuFeature::kSse4_2);

  const uint64_t xcr0 = bit(l1.ecx, 27) ? read_xcr0() : 0;
  constexpr uint64_t kYmmState = 0x6;       // SSE + AVX upper halves
  constexpr uint64_t kZmmState = 0xe0;      // opmask, ZMM0-15 upper halves, ZMM16-31
  constexpr uint64_t kTileState = 0x60000;  // XTILECFG + XTILEDATA
  const bool os_ymm = (xcr0 & kYmmState) == kYmmState;
  const bool os_zmm = os_ymm && (xcr0 & kZmmState) == kZmmState;
  const bool os_tile = (xcr0 & kTileState) == kTileState;

  const bool avx = os_ymm && bit(l1.ecx, 28);
  add(avx, CpuFeature::kAvx);
  add(avx && bit(l1.ecx, 12), CpuFeature::kFma);
  add(avx && bit(l1.ecx, 29), CpuFeature::kF16c);
  if (max_leaf < 7) return set;

  const CpuidRegs l7 = cpuid(7, 0);
  add(avx && bit(l7.ebx, 5), CpuFeature::kAvx2);
  const bool avx512f = os_zmm && bit(l7.ebx, 16);
  add(avx512f, CpuFeature::kAvx512f);
  add(avx512f && bit(l7.ebx, 17), CpuFeature::kAvx512dq);
  add(avx512f && bit(l7.ebx, 30), CpuFeature::kAvx512bw);
  add(avx512f && bit(l7.ebx, 31), CpuFeature::kAvx512vl);
  add(avx512f && bit(l7.ecx, 11), CpuFeature::kAvx512Vnni);
  add(avx512f && bit(l7.edx, 23), CpuFeature::kAvx512Fp16);
  if (l7.eax >= 1) add(avx512f && bit(cpuid(7, 1).eax, 5), CpuFeature::kAvx512Bf16);

  const bool amx = os_tile && bit(l7.edx, 24) && request_amx_permission();
  add(amx, CpuFeature::kAmxTile);
  add(amx && bit(l7.edx, 25), CpuFeature::kAmxInt8);
  add(amx && bit(l7.edx, 22), CpuFeature::kAmxBf16);
  return set;
}
#else
CpuFeatureSet detect() { return 0; }
#endif

std::string valid_caps() {
  std::string out;
  for (const IsaCap& c : kIsaCaps) {
    if (!out.empty()) out += ", ";
    out += c.name;
  }
  return out;
}

}  // namespace

std::string_view cpu_feature_name(CpuFeature feature) {
  for (const NamedFeature& f : kFeatureNames) {
    if (f.feature == feature) return f.name;
  }
  return "unknown";
}

std::string cpu_features_to_string(CpuFeatureSet set) {
  std::string out;
  for (int i = 0; i < 64; ++i) {
    const CpuFeatureSet b = uint64_t{1} << i;
    if ((set & b) == 0) continue;
    if (!out.empty()) out += ' ';
    if ((b & kKnownCpuFeatures) != 0) {
      out += cpu_feature_name(static_cast<CpuFeature>(b));
    } else {
      out += fmt::format("bit{}", i);
    }
  }
  return out;
}

Result<CpuFeatureSet> parse_cpu_features(std::string_view text) {
  CpuFeatureSet set = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t start = text.find_first_not_of(" ,\t", pos);
    if (start == std::string_view::npos) break;
    size_t end = text.find_first_of(" ,\t", start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(start, end - start);
    const NamedFeature* found = nullptr;
    for (const NamedFeature& f : kFeatureNames) {
      if (f.name == word) found = &f;
    }
    if (found == nullptr) {
      return invalid_argument("unknown CPU feature '{}'; known features: {}", word,
                              cpu_features_to_string(kKnownCpuFeatures));
    }
    set |= to_set(found->feature);
    pos = end;
  }
  return set;
}

CpuFeatureSet detected_cpu_features() {
  static const CpuFeatureSet detected = detect();
  return detected;
}

Result<CpuFeatureSet> cpu_features_with_cap(std::string_view cap) {
  if (cap.empty()) cap = "native";
  for (const IsaCap& c : kIsaCaps) {
    if (c.name == cap) return detected_cpu_features() & c.allowed;
  }
  return invalid_argument("unknown ISA cap '{}'; valid values: {}", cap, valid_caps());
}

std::string isa_cap_from_env() {
  const char* env = std::getenv(kMaxIsaEnv);
  return env != nullptr && *env != '\0' ? env : "native";
}

Result<CpuFeatureSet> cpu_features_from_env() {
  const std::string cap = isa_cap_from_env();
  Result<CpuFeatureSet> r = cpu_features_with_cap(cap);
  if (!r.is_ok()) return r.status().with_context(fmt::format("{}={}", kMaxIsaEnv, cap));
  return r;
}

CpuFeatureSet host_cpu_features() {
  static const CpuFeatureSet features = [] {
    Result<CpuFeatureSet> r = cpu_features_from_env();
    return r.is_ok() ? *r : CpuFeatureSet{0};
  }();
  return features;
}

std::string cpu_brand_string() {
#ifdef KILN_X86
  if (cpuid(0x80000000u, 0).eax < 0x80000004u) return "unknown CPU";
  char brand[49] = {};
  for (uint32_t i = 0; i < 3; ++i) {
    const CpuidRegs r = cpuid(0x80000002u + i, 0);
    const uint32_t words[4] = {r.eax, r.ebx, r.ecx, r.edx};
    std::memcpy(brand + 16 * i, words, sizeof words);
  }
  std::string s(brand);
  const size_t first = s.find_first_not_of(' ');
  if (first == std::string::npos) return "unknown CPU";
  const size_t last = s.find_last_not_of(' ');
  return s.substr(first, last - first + 1);
#else
  return "unknown CPU";
#endif
}

}  // namespace kiln
