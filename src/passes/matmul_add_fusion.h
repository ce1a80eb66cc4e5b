#pragma once
// MatMul(A, B) + bias -> kiln.FusedGemm(A, B, C = bias), for the Linear layers PyTorch exports as
// MatMul + Add: B a constant 2-D weight, A of rank >= 2, the bias a constant of shape [N], [1, N]
// or a single element (either Add operand order), and the MatMul's output read only by the Add.
// Gemm nodes are left alone (gemm_activation_fusion takes them as they are).

#include "passes/pass.h"

namespace kiln::passes {

const PassDef& matmul_add_fusion_pass();

}  // namespace kiln::passes
