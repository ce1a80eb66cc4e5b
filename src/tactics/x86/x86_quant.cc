#include "tactics/x86/x86_quant.h"

#include "base/cpu_features.h"

namespace kiln::tactics::x86 {

CpuFeatureSet qisa_features(kx::QIsa isa) {
  return isa == kx::QIsa::kAvx512Vnni ? kIsaAvx512Vnni : kIsaAvx2;
}

std::string_view qisa_suffix(kx::QIsa isa) {
  return isa == kx::QIsa::kAvx512Vnni ? "avx512" : "avx2";
}

kx::QEpilogue x86_epilogue(const kernels::ref::QuantEpilogue& e) {
  kx::QEpilogue q;
  q.in_scale = e.in_scale;
  q.in_zero = e.in_zero;
  q.w_scale = e.w_scale;
  q.bias = e.bias;
  q.z_f32 = e.z_f32;
  q.z_u8 = e.z_u8;
  q.z_scale = e.z_scale;
  q.z_zero = e.z_zero;
  q.act = e.act.kind;
  q.act_alpha = e.act.alpha;
  q.act_beta = e.act.beta;
  q.out_u8 = e.out_u8;
  q.y_scale = e.y_scale;
  q.y_zero = e.y_zero;
  return q;
}

}  // namespace kiln::tactics::x86
