#pragma once
// LayerNormalization's layer kernel (builtin_norm.cc), shared with kiln's x86 tactics: the kernel
// resolves the axis, broadcasts scale and bias to the normalised dims and writes the statistics
// outputs; a row function does the arithmetic on contiguous rows.

#include <functional>
#include <memory>
#include <string>

#include "tactics/tactic.h"

namespace kiln::tactics::builtin {

// Normalises `rows` contiguous rows of n floats (scale and bias have n; bias, mean_out and
// inv_std_out may be null), as kernels::cpu::layer_norm.
using LayerNormRows =
    std::function<void(int64_t rows, int64_t n, const float* x, const float* scale,
                       const float* bias, float epsilon, float* y, float* mean, float* inv_std)>;

// Why a float32 LayerNormalization layer cannot run on these kernels; "" when it can.
std::string layer_norm_why_not(const LayerSpec& spec);

// The kernel object for a layer layer_norm_why_not() accepted, its rows split over the pool.
std::unique_ptr<LayerKernel> make_layer_norm_kernel(const LayerSpec& spec, LayerNormRows rows);

}  // namespace kiln::tactics::builtin
