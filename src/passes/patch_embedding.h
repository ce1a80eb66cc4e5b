#pragma once
// patch_embedding: a vision transformer's patch embedding as a GEMM. PyTorch's ViTs embed patches
// with a Conv whose kernel is its stride, then flatten the pixels and swap them to the front:
//   Conv(X [N, C, H, W], W [M, C, kh, kw], B?) -> Reshape to [N, M, P] -> Transpose(0, 2, 1)
// which is X's non-overlapping patches, a row each, times W as a [C kh kw, M] matrix:
//   kiln.Patches(X) [N, P, C kh kw] -> kiln.FusedGemm(., W', B) [N, P, M]
// The GEMM writes the tokens in the order the encoder reads them, so the transpose of the
// convolution's [M, P] output (a copy of its 150 KB on ViT-Tiny, across both cores' caches) is
// gone, and the patches are read in place as rows of the GEMM's A. The Conv must have no padding,
// no dilation, group 1, kh and kw dividing H and W, constant float32 weights, and outputs read only
// along the chain. Models with explicit quantization (QDQ scales) are left alone: their scales
// belong to the Conv's weights.

#include "passes/pass.h"

namespace kiln::passes {

const PassDef& patch_embedding_pass();

}  // namespace kiln::passes
