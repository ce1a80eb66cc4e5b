#pragma once
// Gemm, or a kiln.FusedGemm without an activation, followed by an activation in any spelling
// passes/activation_match.h knows -> kiln.FusedGemm with that activation as its epilogue (the GELU
// of ViT/BERT MLPs once matmul_add_fusion has made their MatMul + Add a FusedGemm).

#include "passes/pass.h"

namespace kiln::passes {

const PassDef& gemm_activation_fusion_pass();

}  // namespace kiln::passes
