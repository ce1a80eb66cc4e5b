// The AVX2 instantiation of the INT8 kernels: built with -mavx2 -mfma -mf16c like
// kernels_avx2.cc; called only after host_cpu_features() says AVX2 and FMA are there.
#include "kernels/x86/qvec_avx2.h"
// (the traits first: the kernel templates are instantiated over them)
#include "kernels/x86/qisa_entry.h"
#include "kernels/x86/qkernels_dw_impl.h"
#include "kernels/x86/qkernels_gemm_impl.h"
#include "kernels/x86/qkernels_qdq_impl.h"

#define KILN_X86_QISA qavx2
#define KILN_X86_QVEC QVecAvx2
#include "kernels/x86/qkernels_isa.inc"
