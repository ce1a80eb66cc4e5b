#include "tactics/x86/x86_quant.h"

#include "base/cpu_features.h"

namespace kiln::tactics::x86 {

CpuFeatureSet qisa_features(kx::QIsa isa) {
  if (isa == kx::QIsa::kAmxInt8) return kIsaAmxInt8;
  return isa == kx::QIsa::kAvx512Vnni ? kIsaAvx512Vnni : kIsaAvx2;
}

std::string_view qisa_suffix(kx::QIsa isa) {
  if (isa == kx::QIsa::kAmxInt8) return "amx";
  return isa == kx::QIsa::kAvx512Vnni ? "avx512" : "avx2";
}

}  // namespace kiln::tactics::x86
