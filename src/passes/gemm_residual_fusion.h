#pragma once
// Add(gemm_out, other) -> kiln.FusedGemm(A, B, C, Z = other), when gemm_out comes from a Gemm (or a
// kiln.FusedGemm with neither activation nor residual) whose C, if any, is one row (a bias: the
// kernels add Z where a full [M, N] C would go), is read only by the Add, and `other` has exactly
// gemm_out's shape and dtype. A transformer's residual connections after its output projection
// and second MLP layer (x + fc2(...)) become the GEMM's epilogue. The fused node takes the Add's
// place; when both operands qualify, the later-produced GEMM is fused.
//
// Runs after matmul_add_fusion (which makes MatMul + bias a FusedGemm) and before
// gemm_activation_fusion.

#include "passes/pass.h"

namespace kiln::passes {

const PassDef& gemm_residual_fusion_pass();

}  // namespace kiln::passes
