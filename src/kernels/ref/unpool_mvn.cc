#include "kernels/ref/unpool_mvn.h"

#include <cmath>
#include <cstring>

namespace kiln::kernels::ref {

void max_unpool(const std::vector<int64_t>& unpooled, const std::vector<int64_t>& out,
                int64_t x_numel, size_t elem_size, const void* x, const int64_t* indices, void* y) {
  const auto* src = static_cast<const unsigned char*>(x);
  auto* dst = static_cast<unsigned char*>(y);
  for (int64_t i = 0; i < x_numel; ++i) {
    // The coordinates of indices[i] in `unpooled`, re-flattened in `out`.
    int64_t rest = indices[i];
    int64_t offset = 0;
    int64_t stride = 1;
    for (size_t d = unpooled.size(); d-- > 0;) {
      offset += (rest % unpooled[d]) * stride;
      rest /= unpooled[d];
      stride *= out[d];
    }
    std::memcpy(dst + static_cast<size_t>(offset) * elem_size,
                src + static_cast<size_t>(i) * elem_size, elem_size);
  }
}

namespace {

// For each flat index of a tensor of `dims`, the index of its statistics group: the flat index
// over the kept (not reduced) dims only.
std::vector<int64_t> group_of_elements(const std::vector<int64_t>& dims,
                                       const std::vector<bool>& reduce, int64_t* groups) {
  int64_t numel = 1;
  for (int64_t d : dims) numel *= d;
  std::vector<int64_t> gstride(dims.size(), 0);
  int64_t g = 1;
  for (size_t d = dims.size(); d-- > 0;) {
    if (!reduce[d]) {
      gstride[d] = g;
      g *= dims[d];
    }
  }
  *groups = g;
  std::vector<int64_t> group(static_cast<size_t>(numel));
  for (int64_t i = 0; i < numel; ++i) {
    int64_t rest = i;
    int64_t key = 0;
    for (size_t d = dims.size(); d-- > 0;) {
      key += (rest % dims[d]) * gstride[d];
      rest /= dims[d];
    }
    group[static_cast<size_t>(i)] = key;
  }
  return group;
}

}  // namespace

template <typename T>
void mean_variance_normalization(const std::vector<int64_t>& dims, const std::vector<bool>& reduce,
                                 const T* x, T* y) {
  int64_t groups = 0;
  const std::vector<int64_t> group = group_of_elements(dims, reduce, &groups);
  const auto g = static_cast<size_t>(groups);
  std::vector<double> sum(g, 0.0), sq(g, 0.0), count(g, 0.0);
  for (size_t i = 0; i < group.size(); ++i) {
    sum[static_cast<size_t>(group[i])] += static_cast<double>(x[i]);
    count[static_cast<size_t>(group[i])] += 1.0;
  }
  std::vector<double> mean(g);
  for (size_t k = 0; k < g; ++k) mean[k] = count[k] > 0 ? sum[k] / count[k] : 0.0;
  for (size_t i = 0; i < group.size(); ++i) {
    const double dev = static_cast<double>(x[i]) - mean[static_cast<size_t>(group[i])];
    sq[static_cast<size_t>(group[i])] += dev * dev;
  }
  for (size_t i = 0; i < group.size(); ++i) {
    const auto k = static_cast<size_t>(group[i]);
    const double stddev = std::sqrt(sq[k] / count[k]);
    y[i] = static_cast<T>((static_cast<double>(x[i]) - mean[k]) / (stddev + 1e-9));
  }
}

template void mean_variance_normalization<float>(const std::vector<int64_t>&,
                                                 const std::vector<bool>&, const float*, float*);
template void mean_variance_normalization<double>(const std::vector<int64_t>&,
                                                  const std::vector<bool>&, const double*, double*);

}  // namespace kiln::kernels::ref
