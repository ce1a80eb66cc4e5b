#pragma once
// What convolution and GEMM kernels apply to each output block while it is still hot in cache:
// bias, a residual addend, then an activation. Fused layers (Conv + Add + Relu) pass all three; a
// plain layer passes what it has.

#include <cstdint>

namespace kiln::kernels::cpu {

// Applies an activation in place to y[0, n). `ctx` carries its parameters (see
// elementwise.h: activate_unary takes a UnaryParams).
using ActivateFn = void (*)(float* y, int64_t n, const void* ctx);

}  // namespace kiln::kernels::cpu
