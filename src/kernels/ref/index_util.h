#pragma once
// Index arithmetic shared by the windowed reference kernels (conv, pool).

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln::kernels::ref {

inline int64_t product(const std::vector<int64_t>& v) {
  int64_t n = 1;
  for (int64_t d : v) n *= d;
  return n;
}

// Row-major coordinates of flat index `flat` in a tensor of `dims`.
inline void unflatten(int64_t flat, const std::vector<int64_t>& dims, std::vector<int64_t>& coord) {
  for (size_t d = dims.size(); d-- > 0;) {
    coord[d] = flat % dims[d];
    flat /= dims[d];
  }
}

}  // namespace kiln::kernels::ref
