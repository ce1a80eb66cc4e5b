#pragma once
// batchnorm_folding: folds an inference BatchNormalization into the Conv, ConvTranspose, Gemm or
// MatMul producing its input, when that producer's weights (and bias) and the BatchNormalization's
// parameters are constants and nothing else reads the producer's output. A Mul or Div of a Conv's
// output by a per-channel constant folds the same way (a scale without shift): PyTorch's QAT
// export of Conv + BN writes Conv -> Div(BN scale) -> BatchNormalization.
//
// At inference BatchNormalization is y = s[c] * x + t[c] per channel c of axis 1, with
// s = scale / sqrt(var + epsilon) and t = B - s * mean. The channel is the producer's output
// channel, so s scales the weights belonging to that channel and the bias becomes s * bias + t:
//   Conv          W [M, C/g, k...]: row m scaled by s[m].
//   ConvTranspose W [C, M/g, k...]: W[c, j] belongs to output channel (c / (C/g)) * (M/g) + j.
//   Gemm          Y [M, N]: column n of B (row n when transB) scaled by s[n]; the new C is
//                 s * beta * C + t (materialized to [N], or [M, N] when C varies along rows),
//                 with beta = 1.
//   MatMul        2-D output [M, N] with a constant 2-D B: B's columns scaled, and t added by an
//                 Add (named after the BatchNormalization) that a later fusion turns into a Gemm.
// Computed in double, stored in the weights' dtype (float32, float16 or float64). The folded node
// keeps its name, produces the BatchNormalization's output and lists it in fused_from.

#include "passes/pass.h"

namespace kiln::passes {

const PassDef& batchnorm_folding_pass();

}  // namespace kiln::passes
