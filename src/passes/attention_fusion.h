#pragma once
// Scaled dot-product attention as one layer: MatMul(Q, K) -> Softmax over the last axis ->
// MatMul(P, V) becomes kiln.Attention(Q, K, V) (ops/kiln_fused.h), so that each block of rows of
// scores is computed, normalised and multiplied by V while it is still in cache, instead of the
// whole score tensor going through memory three times. Absorbed when each is read only by the
// chain: a Mul or Div by a constant scalar on Q or on the scores (the attention's 1 / sqrt(d),
// the scale attribute); an Add of a mask to the (scaled) scores (Hugging Face's padding mask, a
// causal mask: input M); a Transpose of Q, K or V (the heads' split: the operand's perm, read in
// place by strides); a Transpose of the result that keeps its last axis last (the heads' merge:
// perm_y, the store's strides). All float32, every operand of known rank >= 2; the second MatMul
// must read the probabilities as its first operand.

#include "passes/pass.h"

namespace kiln::passes {

const PassDef& attention_fusion_pass();

}  // namespace kiln::passes
