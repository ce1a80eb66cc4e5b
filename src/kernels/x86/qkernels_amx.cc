// The AMX-INT8 instantiation of the INT8 implicit-GEMM convolution: the only translation unit
// built with -mamx-tile -mamx-int8 (plus the VNNI unit's AVX-512 flags, for the panels and the
// epilogue). Called only after host_cpu_features() says AMX-INT8 is there and the OS granted this
// process the tile state (base/cpu_features.cc).
#include "kernels/x86/qvec_amx.h"
// (the traits first: the kernel templates are instantiated over them)
#include "kernels/x86/qisa_entry.h"
#include "kernels/x86/qkernels_conv_impl.h"

namespace kiln::kernels::x86::amx {

void qconv_pack_weights(const cpu::Conv2DParams& p, const int8_t* w, uint8_t* packed) {
  qconv_pack_weights_impl<QVecAmx>(p, w, packed);
}

void qconv_run(const QConvPlan& plan, const uint8_t* x, const uint8_t* packed_w,
               const QEpilogue& ep, void* y, uint8_t* scratch, int64_t begin, int64_t end) {
  qconv_tasks<QVecAmx>(plan, x, packed_w, ep, y, scratch, begin, end);
}

}  // namespace kiln::kernels::x86::amx
