#pragma once
// The entry points each ISA's translation unit defines (kernels_avx512.cc, kernels_avx2.cc);
// kernels_dispatch.cc calls the one the plan's Isa names.

#include "kernels/x86/kernels.h"

#define KILN_X86_DECLARE_ISA(ns)                                                                  \
  namespace ns {                                                                                  \
  void conv_gemm_pack_weights(const cpu::Conv2DParams& p, const float* w, float* packed);         \
  void conv_gemm_run(const ConvGemmPlan& plan, const float* x, const float* packed_w,             \
                     const Epilogue& ep, float* y, float* scratch, int64_t begin, int64_t end);   \
  void depthwise_run(const DepthwisePlan& plan, const float* x, const float* w,                   \
                     const Epilogue& ep, float* y, float* scratch, int64_t begin, int64_t end);   \
  void gemm_pack_b(const float* b, int64_t rs, int64_t cs, int64_t k, int64_t n, float* packed);  \
  void gemm_run(const GemmPlan& plan, const float* a, const float* packed_b, const Epilogue& ep,  \
                float* c, float* scratch, int64_t begin, int64_t end);                            \
  void gemm_run_f16(const GemmPlan& plan, const float* a, const uint16_t* packed_b,               \
                    const Epilogue& ep, float* c, float* scratch, int64_t begin, int64_t end);    \
  void softmax_rows(int64_t rows, int64_t n, const float* x, float* y);                           \
  void softmax_columns(int64_t n, int64_t inner, int64_t begin, int64_t end, const float* x,      \
                       float* y);                                                                 \
  void activate(const Epilogue& ep, const float* x, float* y, int64_t n);                         \
  void layer_norm_rows(int64_t rows, int64_t n, const float* x, const float* scale,               \
                       const float* bias, float epsilon, float* y, float* mean_out,               \
                       float* inv_std_out);                                                       \
  void nchw16c_conv_run(const Nchw16cConvPlan& plan, const float* packed_w,                       \
                        const Nchw16cConvIo& io, const Epilogue& ep, int64_t begin, int64_t end); \
  void nchw16c_expand_dw_run(const Nchw16cExpandDwPlan& plan, const float* pw_packed,             \
                             const float* dw_packed, const Nchw16cExpandDwIo& io,                 \
                             const Epilogue& pw_ep, const Epilogue& dw_ep, int64_t begin,         \
                             int64_t end);                                                        \
  void winograd_run(const WinogradPlan& plan, const float* packed_w, const WinogradIo& io,        \
                    const Epilogue& ep, int64_t begin, int64_t end);                              \
  void max_pool_nchw16c(const cpu::Pool2DParams& p, const float* x, float* y, int64_t row_begin,  \
                        int64_t row_end);                                                         \
  }

namespace kiln::kernels::x86 {
KILN_X86_DECLARE_ISA(avx512)
KILN_X86_DECLARE_ISA(avx2)
}  // namespace kiln::kernels::x86
