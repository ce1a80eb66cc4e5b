#pragma once
// Reshape(Y = Gemm(A, B, C)) -> kiln.FusedGemm(Reshape(A), B, C) when the Reshape only regroups
// Y's rows (its last dim stays N): the GEMM then writes the reshaped tensor itself. PyTorch's
// nn.MultiheadAttention computes its output projection on [seq * batch, d] rows and views the
// result as [seq, batch, d] (and, for a batch-first model, as [batch, seq, d]) before the residual
// Add; hoisted, the Add reads the GEMM's output and gemm_residual_fusion takes it.
//
// The GEMM qualifies when it is an ONNX Gemm or a kiln.FusedGemm without a residual, with transA =
// 0 and C absent or one row ([N], [1, N], scalar: a batched A broadcasts C to [1, N]), and Y is
// read only by the Reshape, whose shape is a constant without 0s (a 0 would copy another dim of A
// than of Y). Its activation, if any, is element-wise and stays.

#include "passes/pass.h"

namespace kiln::passes {

const PassDef& gemm_view_hoisting_pass();

}  // namespace kiln::passes
