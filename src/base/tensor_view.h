#pragma once
// A non-owning view of a dense row-major tensor: what kernels see on the hot path. Unlike Tensor it
// costs no allocation to make, so an execution context can rebind views to arena slots and user
// buffers without touching the heap.

#include <cassert>
#include <cstdint>
#include <span>

#include "base/dtype.h"
#include "base/tensor.h"

namespace kiln {

struct TensorView {
  DType dtype = DType::kUndefined;
  std::span<const int64_t> dims;  // storage owned by whoever made the view
  void* data = nullptr;

  int rank() const { return static_cast<int>(dims.size()); }
  int64_t dim(int i) const { return dims[static_cast<size_t>(i)]; }
  int64_t numel() const { return dims_numel(dims); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype); }
  template <typename T>
  T* as() const {
    assert(dtype_of<T> == dtype && "TensorView::as<T>: T does not match the dtype");
    return static_cast<T*>(data);
  }

  static TensorView of(const Tensor& t) {
    return TensorView{t.dtype(), t.dims(), const_cast<void*>(t.raw_data())};
  }
};

}  // namespace kiln
