#pragma once
// The one numpy-broadcasting loop every element-wise reference kernel uses.
//
// for_each_broadcast walks the output in row-major order and hands the callback the flat index of
// the output element and, for each input, the flat index of the input element that broadcasts to
// it. The innermost axis is a plain strided loop; outer axes advance an odometer, so there is no
// division per element. Input dims must broadcast to `out` (the caller, shape inference, guarantees
// it).

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/tensor.h"

namespace kiln::kernels::ref {

// Element strides of `in` when read as `out` under numpy broadcasting: `in` is aligned to the right
// of `out`, and axes where `in` has extent 1 (or that `in` lacks) get stride 0.
inline std::vector<int64_t> broadcast_strides(const Dims& in, const Dims& out) {
  std::vector<int64_t> strides(out.size(), 0);
  int64_t stride = 1;
  for (size_t j = in.size(); j-- > 0;) {
    const size_t k = out.size() - in.size() + j;
    strides[k] = in[j] == 1 ? 0 : stride;
    stride *= in[j];
  }
  return strides;
}

// Calls fn(out_index, in_index) for every element of `out`, where in_index is a std::array<int64_t,
// N> of flat indices into the N inputs whose dims are `ins`.
template <size_t N, typename Fn>
void for_each_broadcast(const Dims& out, const std::array<const Dims*, N>& ins, Fn&& fn) {
  const int64_t total = dims_numel(out);
  if (total == 0) return;
  const int rank = static_cast<int>(out.size());
  std::array<std::vector<int64_t>, N> strides;
  std::array<int64_t, N> inner_stride{};
  for (size_t i = 0; i < N; ++i) {
    strides[i] = broadcast_strides(*ins[i], out);
    inner_stride[i] = rank > 0 ? strides[i][static_cast<size_t>(rank - 1)] : 0;
  }
  const int64_t inner = rank > 0 ? out[static_cast<size_t>(rank - 1)] : 1;
  std::vector<int64_t> coord(static_cast<size_t>(rank), 0);
  std::array<int64_t, N> base{};
  std::array<int64_t, N> idx{};
  for (int64_t o = 0; o < total; o += inner) {
    for (int64_t j = 0; j < inner; ++j) {
      for (size_t i = 0; i < N; ++i) idx[i] = base[i] + j * inner_stride[i];
      fn(o + j, idx);
    }
    // Advance the odometer over the outer axes.
    for (int k = rank - 2; k >= 0; --k) {
      const auto ku = static_cast<size_t>(k);
      for (size_t i = 0; i < N; ++i) base[i] += strides[i][ku];
      if (++coord[ku] < out[ku]) break;
      for (size_t i = 0; i < N; ++i) base[i] -= strides[i][ku] * out[ku];
      coord[ku] = 0;
    }
  }
}

// y[o] = fn(a[ia], b[ib]) over the broadcast of a and b.
template <typename A, typename B, typename R, typename Fn>
void binary_broadcast(const A* a, const Dims& a_dims, const B* b, const Dims& b_dims, R* y,
                      const Dims& y_dims, Fn&& fn) {
  if (a_dims == y_dims && b_dims == y_dims) {
    const int64_t n = dims_numel(y_dims);
    for (int64_t i = 0; i < n; ++i) y[i] = fn(a[i], b[i]);
    return;
  }
  for_each_broadcast<2>(
      y_dims, {&a_dims, &b_dims},
      [&](int64_t o, const std::array<int64_t, 2>& i) { y[o] = fn(a[i[0]], b[i[1]]); });
}

}  // namespace kiln::kernels::ref
