#pragma once
// kiln's own fused operators (domain "kiln", version 1), created by the fusion passes:
//
//   kiln.FusedConv(X, W, B?, Z?) -> Y = act(conv(X, W) + B + Z)
//     Conv's attributes (auto_pad, dilations, group, kernel_shape, pads, strides) plus activation
//     and activation_params; Z (the residual) has exactly Y's shape.
//   kiln.FusedGemm(A, B, C?, Z?) -> Y = act(alpha * op(A) @ op(B) + beta * C + Z)
//     Gemm's attributes plus activation and activation_params. B is 2-D. A is 2-D (then C follows
//     Gemm's rules), or of rank > 2 with transA = 0: Y[..., N] = act(alpha * A[..., K] @ op(B) +
//     beta * C + Z) with C broadcastable to [1, N]. Z (the residual, A's dtype) has exactly Y's
//     shape.
//   kiln.Attention(Q, K, V, M?) -> Y = Transpose(softmax(scale * Q' @ K' + M) @ V', perm_y), the
//     softmax along each row of scores, X' = Transpose(X, perm_x) (kernels/ref/attention.h): Q'
//     [..., S, D], K' [..., D, T], V' [..., T, Dv]; M, an additive mask (a padding or causal mask),
//     broadcasts to the scores [..., S, T] (it may add batch dims, not rows or keys); the batch
//     dims broadcast as MatMul's. float32. Attributes scale (default 1) and perm_q, perm_k, perm_v,
//     perm_y (absent: no transpose).
//     In ops/kiln_attention.cc.
//   kiln.Patches(X) -> Y   X [N, C, H, W] cut into non-overlapping kh x kw patches (attribute
//     kernel_shape [kh, kw], dividing H and W), one row per patch in row-major patch order:
//     Y [N, (H / kh) * (W / kw), C * kh * kw], Y[n, p, (c * kh + i) * kw + j] = X[n, c, py * kh +
//     i, px * kw + j]. float32 or float16. A patch embedding's GEMM input
//     (passes/patch_embedding.h). In ops/kiln_patches.cc.
//
// activation is an activation_name() ("" or absent = none) and activation_params its alpha, beta
// (Clip: min, max; LeakyRelu: alpha; HardSigmoid: alpha, beta; none for the others).

#include <string_view>

#include "ir/attribute.h"
#include "ir/tensor_desc.h"
#include "kernels/ref/activation.h"
#include "kernels/ref/attention.h"
#include "ops/op_def.h"

namespace kiln::ops {

inline constexpr std::string_view kKilnDomain = "kiln";
inline constexpr int kKilnOpset = 1;
inline constexpr std::string_view kPatches = "Patches";

// The node's activation attributes, validated (name known, parameter count right).
// `prefix`: the attributes of another activation of the node (kiln.ExpandDwNchw16c's "expand_").
Result<kernels::ref::ActivationParams> read_activation(const NodeContext& ctx,
                                                       std::string_view prefix = "");

// Writes `p` as activation / activation_params attributes (removing them for kNone).
void set_activation_attrs(ir::Attributes& attrs, const kernels::ref::ActivationParams& p);

// Z (a residual input) must have exactly Y's shape: it is added element by element, never
// broadcast. Y's unknown dims take Z's.
Status check_residual(const NodeContext& ctx, const ir::TensorDesc& z, ir::TensorDesc& y);

// FusedConv's reference, act(conv(x, w) + b + z), in float32 whatever x's dtype (b, z may be
// null): shared by kiln.FusedConv and its blocked-layout form kiln.ConvNchw16c (ops/kiln_layout.h).
Result<Tensor> fused_conv_reference(const NodeContext& ctx, const Tensor& x, const Tensor& w,
                                    const Tensor* b, const Tensor* z);

// FusedConv's attributes: Conv's window attributes plus activation and activation_params.
std::vector<AttrSpec> fused_conv_attrs();

// The residual input of a kiln op that adds one element by element (kiln.FusedConv's,
// kiln.ConvNchw16c's and kiln.FusedGemm's Z: 3; kiln.QConvNhwc's: 4, the tactic that runs it
// sums onto Y) when the node has it, else -1.
int residual_input(const ir::Node& node);

// kiln.Attention's perm_q, perm_k, perm_v and perm_y attributes (empty when absent).
kernels::ref::AttentionPerms attention_perms(const ir::Attributes& attrs);

// True when the node has a non-empty activation attribute.
bool has_activation(const ir::Attributes& attrs);

}  // namespace kiln::ops
