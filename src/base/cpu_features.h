#pragma once
// x86 CPU features the kernels dispatch on, detected with cpuid and xgetbv (a feature counts only
// when the OS also saves its registers), and an ISA cap, KILN_MAX_ISA, that hides features above a
// level so lower-ISA code paths can be tested and benchmarked on a bigger CPU.
//
// A CpuFeatureSet is a bitmask of CpuFeature bits. The bit positions are part of the engine file
// format (docs/engine_format.md): never renumber them; new features take new bits.

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace kiln {

enum class CpuFeature : uint64_t {
  kSse4_2 = uint64_t{1} << 0,
  kAvx = uint64_t{1} << 1,
  kAvx2 = uint64_t{1} << 2,
  kFma = uint64_t{1} << 3,
  kF16c = uint64_t{1} << 4,
  kAvx512f = uint64_t{1} << 5,
  kAvx512bw = uint64_t{1} << 6,
  kAvx512vl = uint64_t{1} << 7,
  kAvx512dq = uint64_t{1} << 8,
  kAvx512Vnni = uint64_t{1} << 9,
  kAvx512Bf16 = uint64_t{1} << 10,
  kAvx512Fp16 = uint64_t{1} << 11,
  kAmxTile = uint64_t{1} << 12,
  kAmxInt8 = uint64_t{1} << 13,
  kAmxBf16 = uint64_t{1} << 14,
};

using CpuFeatureSet = uint64_t;

constexpr CpuFeatureSet to_set(CpuFeature f) { return static_cast<CpuFeatureSet>(f); }
constexpr CpuFeatureSet operator|(CpuFeature a, CpuFeature b) { return to_set(a) | to_set(b); }
constexpr CpuFeatureSet operator|(CpuFeatureSet a, CpuFeature b) { return a | to_set(b); }
constexpr bool has_feature(CpuFeatureSet set, CpuFeature f) { return (set & to_set(f)) != 0; }

// Every bit this kiln knows. Bits outside it (from a newer kiln) are features this kiln cannot
// provide.
inline constexpr CpuFeatureSet kKnownCpuFeatures = (uint64_t{1} << 15) - 1;

// The features an ISA level allows (its cap); levels nest.
inline constexpr CpuFeatureSet kIsaSse4_2 = to_set(CpuFeature::kSse4_2);
inline constexpr CpuFeatureSet kIsaAvx2 =
    kIsaSse4_2 | CpuFeature::kAvx | CpuFeature::kAvx2 | CpuFeature::kFma | CpuFeature::kF16c;
inline constexpr CpuFeatureSet kIsaAvx512 = kIsaAvx2 | CpuFeature::kAvx512f |
                                            CpuFeature::kAvx512bw | CpuFeature::kAvx512vl |
                                            CpuFeature::kAvx512dq;
inline constexpr CpuFeatureSet kIsaAvx512Vnni = kIsaAvx512 | CpuFeature::kAvx512Vnni;
// What kiln's AMX-INT8 kernels need (no cap level of its own: `native` allows it, `avx512_vnni`
// does not).
inline constexpr CpuFeatureSet kIsaAmxInt8 =
    kIsaAvx512Vnni | CpuFeature::kAmxTile | CpuFeature::kAmxInt8;

// The environment variable holding the ISA cap.
inline constexpr const char* kMaxIsaEnv = "KILN_MAX_ISA";

// "avx512_vnni"; "unknown" for a value that is not exactly one known feature.
std::string_view cpu_feature_name(CpuFeature feature);

// Names in bit order separated by single spaces ("sse4_2 avx avx2 fma"); a bit this kiln does not
// know is written "bit<N>" (e.g. "bit47"). Empty set: "".
std::string cpu_features_to_string(CpuFeatureSet set);

// Parses feature names separated by spaces and/or commas (what cpu_features_to_string writes for
// known features). An unknown name, "bit<N>" included, is an InvalidArgument error naming it.
Result<CpuFeatureSet> parse_cpu_features(std::string_view text);

// What cpuid and xgetbv report, without any cap (cached). 0 on a non-x86 build.
CpuFeatureSet detected_cpu_features();

// The detected features limited to an ISA level: "sse4_2", "avx2", "avx512", "avx512_vnni" or
// "native" (no limit; so is an empty string). Any other value is an InvalidArgument error listing
// the valid ones.
Result<CpuFeatureSet> cpu_features_with_cap(std::string_view cap);

// cpu_features_with_cap() with the value of KILN_MAX_ISA (unset means native), read on each call;
// the error names the variable. The CLI calls this once at start-up to report a bad value.
Result<CpuFeatureSet> cpu_features_from_env();

// The features kiln may use: cpu_features_from_env(), computed once per process. When KILN_MAX_ISA
// holds an unknown value this returns no features at all rather than guess, so a cap is never
// exceeded; cpu_features_from_env() says what is wrong.
CpuFeatureSet host_cpu_features();

// The value of KILN_MAX_ISA now ("native" when unset or empty), for messages.
std::string isa_cap_from_env();

// The processor's brand string from cpuid ("Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz"), trimmed;
// "unknown CPU" when the CPU does not report one.
std::string cpu_brand_string();

}  // namespace kiln
