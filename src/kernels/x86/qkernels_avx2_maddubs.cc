// The vpmaddubsw instantiation of the INT8 implicit-GEMM and depthwise convolutions and GEMM: built
// with -mavx2 -mfma -mf16c like qkernels_avx2.cc; called only after host_cpu_features() says AVX2
// and FMA are there, and on weights qkernels.h's q*_maddubs_overflow accept.
#include "kernels/x86/qvec_avx2_maddubs.h"
// (the traits first: the kernel templates are instantiated over them)
#include "kernels/x86/qisa_entry.h"
#include "kernels/x86/qkernels_dw_impl.h"
#include "kernels/x86/qkernels_gemm_impl.h"

namespace kiln::kernels::x86::qavx2ubs {

void qconv_pack_weights(const cpu::Conv2DParams& p, const int8_t* w, uint8_t* packed) {
  qconv_pack_weights_impl<QVecAvx2Maddubs>(p, w, packed);
}

void qconv_run(const QConvPlan& plan, const uint8_t* x, const uint8_t* packed_w,
               const QEpilogue& ep, void* y, uint8_t* scratch, int64_t begin, int64_t end) {
  qconv_tasks<QVecAvx2Maddubs>(plan, x, packed_w, ep, y, scratch, begin, end);
}

void qdepthwise_pack_weights(const cpu::Conv2DParams& p, const int8_t* w, uint8_t* packed) {
  qdw_pack_weights_impl<QVecAvx2Maddubs>(p, w, packed);
}

void qdepthwise_run(const QDepthwisePlan& plan, const uint8_t* x, const uint8_t* packed_w,
                    const QEpilogue& ep, void* y, uint8_t* scratch, int64_t begin, int64_t end) {
  qdepthwise_tasks<QVecAvx2Maddubs>(plan, x, packed_w, ep, y, scratch, begin, end);
}

void qgemm_pack_b(const int8_t* b, int64_t k, int64_t n, uint8_t* packed) {
  qgemm_pack_b_impl<QVecAvx2Maddubs>(b, k, n, packed);
}

void qgemm_run(const QGemmPlan& plan, const uint8_t* a, const uint8_t* packed_b,
               const QEpilogue& ep, void* y, uint8_t* scratch, int64_t begin, int64_t end) {
  qgemm_tasks<QVecAvx2Maddubs>(plan, a, packed_b, ep, y, scratch, begin, end);
}

}  // namespace kiln::kernels::x86::qavx2ubs
