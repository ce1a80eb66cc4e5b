// The AVX-512 VNNI instantiation of the INT8 kernels: the only translation unit built with
// -mavx512vnni (plus -mavx512f -mavx512bw -mavx512vl -mavx512dq -mfma). Called only after
// host_cpu_features() says AVX-512 VNNI is there (the tactics' required_features()).
#include "kernels/x86/qvec_vnni.h"
// (the traits first: the kernel templates are instantiated over them)
#include "kernels/x86/qisa_entry.h"
#include "kernels/x86/qkernels_dw_impl.h"
#include "kernels/x86/qkernels_dw_lanes_impl.h"
#include "kernels/x86/qkernels_gemm_impl.h"
#include "kernels/x86/qkernels_nhwc_impl.h"
#include "kernels/x86/qkernels_pool_impl.h"
#include "kernels/x86/qkernels_qdq_impl.h"

#define KILN_X86_QISA vnni
#define KILN_X86_QVEC QVecVnni
#include "kernels/x86/qkernels_isa.inc"

namespace kiln::kernels::x86::vnni {

void max_pool_u8(const cpu::Pool2DParams& p, const uint8_t* x, uint8_t* y, int64_t begin,
                 int64_t end) {
  qmax_pool_rows(p, x, y, begin, end);
}

void max_pool_nhwc_u8(const cpu::Pool2DParams& p, int64_t channels, const uint8_t* x, uint8_t* y,
                      int64_t begin, int64_t end) {
  qmax_pool_nhwc_rows(p, channels, x, y, begin, end);
}

void qdepthwise_lanes_pack_weights(const cpu::Conv2DParams& p, const int8_t* w, uint8_t* packed) {
  qdw_lanes_pack_weights_impl(p, w, packed);
}

void qdepthwise_lanes_run(const QDepthwiseLanesPlan& plan, const uint8_t* x,
                          const uint8_t* packed_w, const QEpilogue& ep, void* y, uint8_t* scratch,
                          int64_t begin, int64_t end) {
  qdw_lanes_tasks<QVecVnni>(plan, x, packed_w, ep, y, scratch, begin, end);
}

void qconv_nhwc_pack_weights(const cpu::Conv2DParams& p, const int8_t* w, uint8_t* packed) {
  qnhwc_pack_weights_impl(p, w, packed);
}

void qconv_nhwc_run(const QConvNhwcPlan& plan, const uint8_t* x, const uint8_t* packed_w,
                    const QEpilogue& ep, void* y, uint8_t* scratch, int64_t begin, int64_t end) {
  qnhwc_tasks<QVecVnni>(plan, x, packed_w, ep, y, scratch, begin, end);
}

}  // namespace kiln::kernels::x86::vnni
