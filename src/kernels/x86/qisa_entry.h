#pragma once
// The INT8 entry points each ISA's translation unit defines (qkernels_vnni.cc, qkernels_avx2.cc,
// qkernels_avx2_maddubs.cc, qkernels_amx.cc);
// qkernels_dispatch.cc calls the one the plan's QIsa names.

#include "kernels/x86/qkernels.h"

#define KILN_X86_DECLARE_QISA(ns)                                                                  \
  namespace ns {                                                                                   \
  void qconv_pack_weights(const cpu::Conv2DParams& p, const int8_t* w, uint8_t* packed);           \
  void qconv_run(const QConvPlan& plan, const uint8_t* x, const uint8_t* packed_w,                 \
                 const QEpilogue& ep, void* y, uint8_t* scratch, int64_t begin, int64_t end);      \
  void qdepthwise_pack_weights(const cpu::Conv2DParams& p, const int8_t* w, uint8_t* packed);      \
  void qdepthwise_run(const QDepthwisePlan& plan, const uint8_t* x, const uint8_t* packed_w,       \
                      const QEpilogue& ep, void* y, uint8_t* scratch, int64_t begin, int64_t end); \
  void qgemm_pack_b(const int8_t* b, int64_t k, int64_t n, uint8_t* packed);                       \
  void qgemm_run(const QGemmPlan& plan, const uint8_t* a, const uint8_t* packed_b,                 \
                 const QEpilogue& ep, void* y, uint8_t* scratch, int64_t begin, int64_t end);      \
  void quantize_per_tensor(const float* x, float scale, int32_t zero, bool is_signed, void* y,     \
                           int64_t begin, int64_t end);                                            \
  void dequantize_per_tensor(const void* x, float scale, int32_t zero, bool is_signed, float* y,   \
                             int64_t begin, int64_t end);                                          \
  }

namespace kiln::kernels::x86 {
KILN_X86_DECLARE_QISA(vnni)
namespace vnni {
void max_pool_u8(const cpu::Pool2DParams& p, const uint8_t* x, uint8_t* y, int64_t begin,
                 int64_t end);
void max_pool_nhwc_u8(const cpu::Pool2DParams& p, int64_t channels, const uint8_t* x, uint8_t* y,
                      int64_t begin, int64_t end);
void qdepthwise_lanes_pack_weights(const cpu::Conv2DParams& p, const int8_t* w, uint8_t* packed);
void qdepthwise_lanes_run(const QDepthwiseLanesPlan& plan, const uint8_t* x,
                          const uint8_t* packed_w, const QEpilogue& ep, void* y, uint8_t* scratch,
                          int64_t begin, int64_t end);
void qconv_nhwc_pack_weights(const cpu::Conv2DParams& p, const int8_t* w, uint8_t* packed);
void qconv_nhwc_run(const QConvNhwcPlan& plan, const uint8_t* x, const uint8_t* packed_w,
                    const QEpilogue& ep, void* y, uint8_t* scratch, int64_t begin, int64_t end);
}  // namespace vnni
KILN_X86_DECLARE_QISA(qavx2)

// vpmaddubsw (qkernels_avx2_maddubs.cc): the convolutions and the GEMM (no quantize kernels).
namespace qavx2ubs {
void qconv_pack_weights(const cpu::Conv2DParams& p, const int8_t* w, uint8_t* packed);
void qconv_run(const QConvPlan& plan, const uint8_t* x, const uint8_t* packed_w,
               const QEpilogue& ep, void* y, uint8_t* scratch, int64_t begin, int64_t end);
void qdepthwise_pack_weights(const cpu::Conv2DParams& p, const int8_t* w, uint8_t* packed);
void qdepthwise_run(const QDepthwisePlan& plan, const uint8_t* x, const uint8_t* packed_w,
                    const QEpilogue& ep, void* y, uint8_t* scratch, int64_t begin, int64_t end);
void qgemm_pack_b(const int8_t* b, int64_t k, int64_t n, uint8_t* packed);
void qgemm_run(const QGemmPlan& plan, const uint8_t* a, const uint8_t* packed_b,
               const QEpilogue& ep, void* y, uint8_t* scratch, int64_t begin, int64_t end);
}  // namespace qavx2ubs

// AMX-INT8 (qkernels_amx.cc): the implicit-GEMM convolution only.
namespace amx {
void qconv_pack_weights(const cpu::Conv2DParams& p, const int8_t* w, uint8_t* packed);
void qconv_run(const QConvPlan& plan, const uint8_t* x, const uint8_t* packed_w,
               const QEpilogue& ep, void* y, uint8_t* scratch, int64_t begin, int64_t end);
}  // namespace amx
}  // namespace kiln::kernels::x86
