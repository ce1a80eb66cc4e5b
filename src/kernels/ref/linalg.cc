#include "kernels/ref/linalg.h"

#include <cmath>
#include <utility>
#include <vector>

namespace kiln::kernels::ref {
namespace {

// Determinant of the n x n matrix a (destroyed).
double lu_det(std::vector<double>& a, int64_t n) {
  auto at = [&](int64_t r, int64_t c) -> double& { return a[static_cast<size_t>(r * n + c)]; };
  double det = 1.0;
  for (int64_t k = 0; k < n; ++k) {
    int64_t pivot = k;
    for (int64_t r = k + 1; r < n; ++r) {
      if (std::abs(at(r, k)) > std::abs(at(pivot, k))) pivot = r;
    }
    if (at(pivot, k) == 0.0) return 0.0;  // singular
    if (pivot != k) {
      for (int64_t c = 0; c < n; ++c) std::swap(at(k, c), at(pivot, c));
      det = -det;
    }
    det *= at(k, k);
    for (int64_t r = k + 1; r < n; ++r) {
      const double f = at(r, k) / at(k, k);
      for (int64_t c = k + 1; c < n; ++c) at(r, c) -= f * at(k, c);
    }
  }
  return det;
}

}  // namespace

template <typename T>
void det(int64_t batch, int64_t n, const T* x, T* y) {
  std::vector<double> a(static_cast<size_t>(n * n));
  for (int64_t b = 0; b < batch; ++b) {
    const T* m = x + b * n * n;
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(m[i]);
    y[b] = static_cast<T>(lu_det(a, n));
  }
}

template void det<float>(int64_t, int64_t, const float*, float*);
template void det<double>(int64_t, int64_t, const double*, double*);

}  // namespace kiln::kernels::ref
