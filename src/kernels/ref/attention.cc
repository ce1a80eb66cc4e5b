#include "kernels/ref/attention.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

namespace kiln::kernels::ref {
namespace {

using Dims = std::vector<int64_t>;

std::string dims_text(const Dims& d) { return fmt::format("[{}]", fmt::join(d, ",")); }

// A tensor of `dims` (row-major) seen through `perm`: the view's dims and element strides.
struct View {
  Dims dims, strides;
};
View permuted(const Dims& dims, std::span<const int64_t> perm) {
  Dims strides(dims.size());
  int64_t s = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = s;
    s *= dims[i];
  }
  if (perm.empty()) return {dims, strides};
  View v;
  for (int64_t p : perm) {
    v.dims.push_back(dims[static_cast<size_t>(p)]);
    v.strides.push_back(strides[static_cast<size_t>(p)]);
  }
  return v;
}

Dims batch_of(const Dims& dims) { return {dims.begin(), dims.end() - 2}; }

// numpy broadcasting of batch dims into `out`; false when two dims differ and neither is 1.
bool broadcast_into(const Dims& in, Dims& out) {
  if (in.size() > out.size()) out.insert(out.begin(), in.size() - out.size(), 1);
  const size_t shift = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) {
    int64_t& o = out[shift + i];
    if (in[i] == o || in[i] == 1) continue;
    if (o != 1) return false;
    o = in[i];
  }
  return true;
}

// For every output batch index, where the matrix of view `v` (batch dims its leading ones) that it
// reads starts; a dim of 1 is broadcast (stride 0).
Dims batch_offsets(const View& v, const Dims& out_batch) {
  int64_t count = 1;
  for (int64_t d : out_batch) count *= d;
  const size_t nb = v.dims.size() - 2;
  const size_t shift = out_batch.size() - nb;
  Dims stride(out_batch.size(), 0);
  for (size_t i = 0; i < nb; ++i) stride[shift + i] = v.dims[i] == 1 ? 0 : v.strides[i];
  Dims offsets(static_cast<size_t>(count));
  for (int64_t b = 0; b < count; ++b) {
    int64_t rest = b, off = 0;
    for (size_t i = out_batch.size(); i-- > 0;) {
      off += rest % out_batch[i] * stride[i];
      rest /= out_batch[i];
    }
    offsets[static_cast<size_t>(b)] = off;
  }
  return offsets;
}

MatrixStrides matrix_strides(const View& v) {
  return {v.strides[v.strides.size() - 2], v.strides.back()};
}

}  // namespace

bool valid_perm(std::span<const int64_t> perm, int64_t rank) {
  if (perm.empty()) return true;
  if (static_cast<int64_t>(perm.size()) != rank) return false;
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[static_cast<size_t>(p)]) return false;
    seen[static_cast<size_t>(p)] = true;
  }
  return true;
}

std::optional<AttentionShape> attention_shape(const Dims& q_dims, const Dims& k_dims,
                                              const Dims& v_dims, const AttentionPerms& perms,
                                              std::string& error, const Dims* mask_dims) {
  if (q_dims.size() < 2 || k_dims.size() < 2 || v_dims.size() < 2) {
    error = fmt::format("Q {}, K {} and V {} must each have rank >= 2", dims_text(q_dims),
                        dims_text(k_dims), dims_text(v_dims));
    return std::nullopt;
  }
  const auto rank = [](const Dims& d) { return static_cast<int64_t>(d.size()); };
  if (!valid_perm(perms.q, rank(q_dims)) || !valid_perm(perms.k, rank(k_dims)) ||
      !valid_perm(perms.v, rank(v_dims))) {
    error = fmt::format(
        "perm_q [{}], perm_k [{}] and perm_v [{}] must permute the axes of Q {}, "
        "K {} and V {}",
        fmt::join(perms.q, ","), fmt::join(perms.k, ","), fmt::join(perms.v, ","),
        dims_text(q_dims), dims_text(k_dims), dims_text(v_dims));
    return std::nullopt;
  }
  const View q = permuted(q_dims, perms.q), k = permuted(k_dims, perms.k),
             v = permuted(v_dims, perms.v);
  AttentionShape a;
  a.s = q.dims[q.dims.size() - 2];
  a.d = q.dims.back();
  a.t = k.dims.back();
  a.dv = v.dims.back();
  if (k.dims[k.dims.size() - 2] != a.d || v.dims[v.dims.size() - 2] != a.t) {
    error = fmt::format("Q' {} @ K' {} @ V' {} do not chain (the operands as transposed)",
                        dims_text(q.dims), dims_text(k.dims), dims_text(v.dims));
    return std::nullopt;
  }
  if (!broadcast_into(batch_of(q.dims), a.out_batch) ||
      !broadcast_into(batch_of(k.dims), a.out_batch) ||
      !broadcast_into(batch_of(v.dims), a.out_batch)) {
    error = fmt::format("the batch dims of Q' {}, K' {} and V' {} do not broadcast",
                        dims_text(q.dims), dims_text(k.dims), dims_text(v.dims));
    return std::nullopt;
  }
  // The mask as [mask_batch..., S or 1, T or 1] (a mask of rank below 2 gains leading 1s).
  View mask;
  if (mask_dims != nullptr) {
    Dims md = *mask_dims;
    if (md.size() < 2) md.insert(md.begin(), 2 - md.size(), 1);
    mask = permuted(md, {});
    const int64_t ms = md[md.size() - 2], mt = md.back();
    if ((ms != a.s && ms != 1) || (mt != a.t && mt != 1) ||
        !broadcast_into(batch_of(md), a.out_batch)) {
      error = fmt::format("the mask {} does not broadcast to the scores [{},{},{}]",
                          dims_text(*mask_dims), fmt::join(a.out_batch, ","), a.s, a.t);
      return std::nullopt;
    }
    a.masked = true;
    a.m = {ms == 1 ? 0 : mt, mt == 1 ? 0 : 1};
  }
  Dims result = a.out_batch;
  result.insert(result.end(), {a.s, a.dv});
  if (!valid_perm(perms.y, rank(result))) {
    error = fmt::format("perm_y [{}] must permute the axes of the result {}",
                        fmt::join(perms.y, ","), dims_text(result));
    return std::nullopt;
  }
  // The stored tensor is Transpose(result, perm_y): result axis perm_y[j] is stored axis j.
  a.y_dims = result;
  View y{result, Dims(result.size())};
  if (!perms.y.empty()) {
    for (size_t j = 0; j < perms.y.size(); ++j)
      a.y_dims[j] = result[static_cast<size_t>(perms.y[j])];
  }
  const View stored = permuted(a.y_dims, {});
  for (size_t j = 0; j < result.size(); ++j) {
    const size_t axis = perms.y.empty() ? j : static_cast<size_t>(perms.y[j]);
    y.strides[axis] = stored.strides[j];
  }
  a.q = matrix_strides(q);
  a.k = matrix_strides(k);
  a.v = matrix_strides(v);
  a.y = matrix_strides(y);
  a.q_offset = batch_offsets(q, a.out_batch);
  a.k_offset = batch_offsets(k, a.out_batch);
  a.v_offset = batch_offsets(v, a.out_batch);
  a.y_offset = batch_offsets(y, a.out_batch);
  if (a.masked) a.m_offset = batch_offsets(mask, a.out_batch);
  return a;
}

void attention(const AttentionShape& a, float scale, const float* q, const float* k, const float* v,
               const float* mask, float* y) {
  std::vector<float> p(static_cast<size_t>(a.t));
  for (int64_t b = 0; b < a.batches(); ++b) {
    const size_t bi = static_cast<size_t>(b);
    const float* qb = q + a.q_offset[bi];
    const float* kb = k + a.k_offset[bi];
    const float* vb = v + a.v_offset[bi];
    float* yb = y + a.y_offset[bi];
    const float* mb = a.masked ? mask + a.m_offset[bi] : nullptr;
    for (int64_t i = 0; i < a.s; ++i) {
      double max = -INFINITY;
      for (int64_t j = 0; j < a.t; ++j) {
        double acc = 0;
        for (int64_t e = 0; e < a.d; ++e) {
          acc += static_cast<double>(qb[i * a.q.rs + e * a.q.cs]) * kb[e * a.k.rs + j * a.k.cs];
        }
        float& pj = p[static_cast<size_t>(j)];
        pj = static_cast<float>(scale * acc);
        if (mb != nullptr) pj += mb[i * a.m.rs + j * a.m.cs];
        max = std::max(max, static_cast<double>(pj));
      }
      double sum = 0;
      for (float pj : p) sum += std::exp(pj - max);
      for (float& pj : p) pj = static_cast<float>(std::exp(pj - max) / sum);
      for (int64_t c = 0; c < a.dv; ++c) {
        double acc = 0;
        for (int64_t j = 0; j < a.t; ++j) {
          acc += static_cast<double>(p[static_cast<size_t>(j)]) * vb[j * a.v.rs + c * a.v.cs];
        }
        yb[i * a.y.rs + c * a.y.cs] = static_cast<float>(acc);
      }
    }
  }
}

}  // namespace kiln::kernels::ref
