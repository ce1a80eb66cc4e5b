#pragma once
// A Gemm or kiln.FusedGemm (no residual) whose output only Slices read, each of the last axis with
// constant bounds and step 1, becomes one kiln.FusedGemm per Slice over that range of B's columns
// (and of C's, when C holds one value per column): a transformer's fused QKV projection ([S, 3D],
// sliced into Q, K and V, as torch's multi-head attention exports it) then writes Q, K and V
// where they are read instead of writing the whole product and copying each third out of it. The
// new GEMMs take the GEMM's place, named after it with their column range; A is read by each.
//
// Runs after the GEMM fusions (matmul_add_fusion makes MatMul + bias a FusedGemm,
// gemm_activation_fusion adds an activation, which each part keeps).

#include "passes/pass.h"

namespace kiln::passes {

const PassDef& gemm_slice_split_pass();

}  // namespace kiln::passes
