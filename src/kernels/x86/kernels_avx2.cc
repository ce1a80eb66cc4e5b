// The AVX2 + FMA instantiation of kernels_impl.h: the only translation unit built with
// -mavx2 -mfma -mf16c. Called only after host_cpu_features() says AVX2 and FMA are there.
#include "kernels/x86/vec_avx2.h"
// (the traits first: the kernel templates are instantiated over them)
#include "kernels/x86/isa_entry.h"
#include "kernels/x86/kernels_conv_impl.h"
#include "kernels/x86/kernels_dw_impl.h"
#include "kernels/x86/kernels_layernorm_impl.h"
#include "kernels/x86/kernels_nchw16c_impl.h"
#include "kernels/x86/kernels_pool_impl.h"
#include "kernels/x86/kernels_softmax_impl.h"
#include "kernels/x86/kernels_winograd_impl.h"

#define KILN_X86_ISA avx2
#define KILN_X86_VEC VecAvx2
#include "kernels/x86/kernels_isa.inc"
