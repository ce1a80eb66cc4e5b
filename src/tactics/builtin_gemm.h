#pragma once
// Gemm with the builtin blocked GEMM (kernels/cpu/gemm.h), for Gemm and for layers with Gemm's
// inputs and attributes plus a fused activation (a fused Gemm + activation).

#include <memory>
#include <optional>
#include <string>

#include "kernels/cpu/elementwise.h"
#include "tactics/tactic.h"

namespace kiln::tactics::builtin {

// Why the kernel cannot run a layer with Gemm's inputs (A, B[, C]) and attributes (alpha, beta,
// transA, transB); "" when it can.
std::string gemm_why_not(const LayerSpec& spec);

// The kernel object for a layer gemm_why_not() accepted; `activation` is applied last.
Result<std::unique_ptr<LayerKernel>> make_gemm_kernel(
    const LayerSpec& spec, const std::optional<kernels::cpu::UnaryParams>& activation);

}  // namespace kiln::tactics::builtin
