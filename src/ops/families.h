#pragma once
// One registration function per op family file.
#include "ops/op_def.h"

namespace kiln::ops {

void register_elementwise_ops(
    OpRegistry& r);  // ops/elementwise.cc: unary, binary, compare, logic, Cast, Where
void register_shape_ops(
    OpRegistry& r);  // ops/shape.cc: Reshape, Transpose, Concat, Slice, Gather, Pad ...
void register_nn_ops(
    OpRegistry& r);  // ops/nn.cc: Conv, ConvTranspose, pooling, normalization, Resize
void register_math_ops(
    OpRegistry& r);  // ops/math.cc: MatMul, Gemm, Einsum, Softmax, reductions, TopK, Q/DQ, NMS
void register_loss_ops(
    OpRegistry& r);  // ops/loss.cc: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
void register_rnn_ops(OpRegistry& r);       // ops/rnn.cc: RNN, GRU, LSTM
void register_sampling_ops(OpRegistry& r);  // ops/sampling.cc: GridSample
void register_kiln_ops(OpRegistry& r);      // ops/kiln_fused.cc: kiln.FusedConv, kiln.FusedGemm
void register_kiln_attention_ops(OpRegistry& r);  // ops/kiln_attention.cc: kiln.Attention
void register_kiln_patches_ops(OpRegistry& r);    // ops/kiln_patches.cc: kiln.Patches
void register_kiln_quant_ops(OpRegistry& r);
void register_kiln_layout_ops(
    OpRegistry& r);  // ops/kiln_layout.cc: kiln.ToNchw16c, kiln.FromNchw16c, kiln.ConvNchw16c   //
                     // ops/kiln_quant.cc: kiln.QConv, kiln.QGemm

}  // namespace kiln::ops
