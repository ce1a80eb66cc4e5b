// The AVX-512 instantiation of kernels_impl.h: the only translation unit built with AVX-512 flags
// (-mavx512f -mavx512bw -mavx512vl -mavx512dq -mfma). Called only after host_cpu_features() says
// AVX-512 is there (the tactics' required_features()).
#include "kernels/x86/vec_avx512.h"
// (the traits first: the kernel templates are instantiated over them)
#include "kernels/x86/isa_entry.h"
#include "kernels/x86/kernels_conv_impl.h"
#include "kernels/x86/kernels_dw_impl.h"
#include "kernels/x86/kernels_layernorm_impl.h"
#include "kernels/x86/kernels_nchw16c_impl.h"
#include "kernels/x86/kernels_pool_impl.h"
#include "kernels/x86/kernels_softmax_impl.h"
#include "kernels/x86/kernels_winograd_impl.h"

#define KILN_X86_ISA avx512
#define KILN_X86_VEC VecAvx512
#include "kernels/x86/kernels_isa.inc"
