#pragma once
// Reference scaled dot-product attention (kiln.Attention, ops/kiln_fused.h): per batch matrix,
// Y = softmax(scale * Q @ K + M) @ V with the softmax along each row of scores and M an optional
// additive mask, where each operand and the result may be a transposed view of the tensor in
// memory.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kiln::kernels::ref {

// The operands as strided batches of matrices. Each tensor is read through a permutation of its
// axes (empty: none): Q' = Transpose(Q, perm_q) is [q_batch..., S, D], K' [k_batch..., D, T],
// V' [v_batch..., T, Dv]; the mask M (optional) broadcasts to the scores [..., S, T]; the batch
// dims of all four broadcast (numpy rules) to out_batch, and the result [out_batch..., S, Dv] is
// stored as Transpose(result, perm_y).
struct AttentionPerms {
  std::vector<int64_t> q, k, v, y;
};

// Element (row r, column c) of one matrix of a view: base + r * rs + c * cs.
struct MatrixStrides {
  int64_t rs = 0, cs = 0;
};

struct AttentionShape {
  int64_t s = 0, d = 0, t = 0, dv = 0;
  std::vector<int64_t> out_batch;
  std::vector<int64_t> y_dims;  // the output tensor's dims (perm_y applied)
  MatrixStrides q, k, v, y;     // k: K' (depth row, key column)
  bool masked = false;
  MatrixStrides m;  // the mask's (query row, key column) strides: 0 where it broadcasts
  // Per output batch matrix (row-major over out_batch): where its Q', K', V', M and Y matrices
  // start, in elements (a broadcast batch dim reads the same matrix again).
  std::vector<int64_t> q_offset, k_offset, v_offset, m_offset, y_offset;
  int64_t batches() const { return static_cast<int64_t>(y_offset.size()); }
};

// False when `perm` (of a tensor of rank `rank`) is neither empty nor a permutation of [0, rank).
bool valid_perm(std::span<const int64_t> perm, int64_t rank);

// The shape of concrete operand dims (`mask` null: none), or nullopt with `error` saying what
// does not fit (a rank below 2, a permutation of another rank, dims that do not chain or
// broadcast).
std::optional<AttentionShape> attention_shape(const std::vector<int64_t>& q,
                                              const std::vector<int64_t>& k,
                                              const std::vector<int64_t>& v,
                                              const AttentionPerms& perms, std::string& error,
                                              const std::vector<int64_t>* mask = nullptr);

// Products accumulate in double; the scores and probabilities are rounded to float between the
// steps, as the unfused MatMul, Softmax, MatMul chain stores them.
void attention(const AttentionShape& shape, float scale, const float* q, const float* k,
               const float* v, const float* mask, float* y);

}  // namespace kiln::kernels::ref
