#pragma once
// Reference linear algebra: Det.

#include <cstdint>

namespace kiln::kernels::ref {

// y[b] = det(x[b]) for `batch` row-major n x n matrices, by LU decomposition with partial pivoting
// in double. n = 0 gives 1 (the empty product). T is float or double.
template <typename T>
void det(int64_t batch, int64_t n, const T* x, T* y);

}  // namespace kiln::kernels::ref
