#include "kernels/ref/scatter.h"

#include <algorithm>
#include <cassert>
#include <type_traits>
#include <vector>

#include "kernels/ref/movement.h"

namespace kiln::kernels::ref {
namespace {

// a (op) b in T's own arithmetic; float16 goes through float, bool uses or/and.
template <typename T>
T combine(T a, T b, ScatterReduction r) {
  if constexpr (std::is_same_v<T, Half>) {
    return Half(combine<float>(static_cast<float>(a), static_cast<float>(b), r));
  } else if constexpr (std::is_same_v<T, bool>) {
    switch (r) {
      case ScatterReduction::kNone:
        return b;
      case ScatterReduction::kAdd:
      case ScatterReduction::kMax:
        return a || b;
      case ScatterReduction::kMul:
      case ScatterReduction::kMin:
        return a && b;
    }
    return b;
  } else {
    switch (r) {
      case ScatterReduction::kNone:
        return b;
      case ScatterReduction::kAdd:
        return static_cast<T>(a + b);
      case ScatterReduction::kMul:
        return static_cast<T>(a * b);
      case ScatterReduction::kMax:
        return std::max(a, b);
      case ScatterReduction::kMin:
        return std::min(a, b);
    }
    return b;
  }
}

template <typename T>
void scatter_elements_typed(T* out, const Dims& out_dims, std::span<const int64_t> indices,
                            const Dims& idx_dims, const T* updates, int64_t axis,
                            ScatterReduction r) {
  const std::vector<int64_t> out_strides = row_major_strides(out_dims);
  const int64_t n = dims_numel(idx_dims);
  std::vector<int64_t> coord(idx_dims.size(), 0);
  for (int64_t q = 0; q < n; ++q) {
    int64_t dst = 0;
    for (size_t k = 0; k < coord.size(); ++k) {
      const int64_t c =
          static_cast<int64_t>(k) == axis ? indices[static_cast<size_t>(q)] : coord[k];
      assert(c >= 0 && c < out_dims[k]);
      dst += c * out_strides[k];
    }
    out[dst] = combine(out[dst], updates[q], r);
    for (size_t k = coord.size(); k-- > 0;) {  // next row-major coordinate of idx_dims
      if (++coord[k] < idx_dims[k]) break;
      coord[k] = 0;
    }
  }
}

template <typename T>
void scatter_nd_typed(T* out, const Dims& out_dims, std::span<const int64_t> indices,
                      const Dims& idx_dims, const T* updates, ScatterReduction r) {
  const int64_t m = idx_dims.back();
  int64_t tuples = 1;
  for (size_t k = 0; k + 1 < idx_dims.size(); ++k) tuples *= idx_dims[k];
  int64_t slice = 1;
  for (size_t k = static_cast<size_t>(m); k < out_dims.size(); ++k) slice *= out_dims[k];
  const std::vector<int64_t> strides = row_major_strides(out_dims);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t dst = 0;
    for (int64_t j = 0; j < m; ++j) {
      dst += indices[static_cast<size_t>(t * m + j)] * strides[static_cast<size_t>(j)];
    }
    for (int64_t i = 0; i < slice; ++i) {
      out[dst + i] = combine(out[dst + i], updates[t * slice + i], r);
    }
  }
}

}  // namespace

bool scatter_elements(DType dtype, void* out, const Dims& out_dims,
                      std::span<const int64_t> indices, const Dims& idx_dims, const void* updates,
                      int64_t axis, ScatterReduction reduction) {
  return dispatch_dtype(dtype, [&]<typename T>() {
    scatter_elements_typed<T>(static_cast<T*>(out), out_dims, indices, idx_dims,
                              static_cast<const T*>(updates), axis, reduction);
  });
}

bool scatter_nd(DType dtype, void* out, const Dims& out_dims, std::span<const int64_t> indices,
                const Dims& idx_dims, const void* updates, ScatterReduction reduction) {
  return dispatch_dtype(dtype, [&]<typename T>() {
    scatter_nd_typed<T>(static_cast<T*>(out), out_dims, indices, idx_dims,
                        static_cast<const T*>(updates), reduction);
  });
}

}  // namespace kiln::kernels::ref
