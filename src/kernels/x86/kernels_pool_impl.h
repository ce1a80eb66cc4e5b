#pragma once
// FP32 max pooling on nChw16c behind kernels.h (max_pool_nchw16c) over a vector-traits type T: the
// portable kernel's window walk (kernels/cpu/max_pool_nchw16c_walk.h), which the base ISA compiles
// to four 4-float maxima a tap, with a block's 16 lanes in one AVX-512 vector (two AVX2 ones).
// Included by each ISA's translation unit after kernels_impl.h; anonymous namespace as there.

#include <limits>

#include "kernels/cpu/max_pool_nchw16c_walk.h"
#include "kernels/x86/kernels_nchw16c_impl.h"

namespace kiln::kernels::x86 {
namespace {

template <class T>
struct PoolVecBlock {
  typename T::V v[kNv<T>];  // a block's 16 lanes

  static PoolVecBlock lowest() {
    PoolVecBlock b;
    for (auto& x : b.v) x = T::set1(std::numeric_limits<float>::lowest());
    return b;
  }
  // max(x, acc) is acc where x is NaN: NaN inputs are skipped, as in the portable kernel.
  void take(const float* x) {
    for (int j = 0; j < kNv<T>; ++j) v[j] = T::max(T::loadu(x + j * T::kLanes), v[j]);
  }
  void store(float* y) const {
    for (int j = 0; j < kNv<T>; ++j) T::storeu(y + j * T::kLanes, v[j]);
  }
};

}  // namespace
}  // namespace kiln::kernels::x86
