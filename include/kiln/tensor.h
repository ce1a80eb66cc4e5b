#pragma once
// A dense, row-major tensor with concrete dims. Storage is 64-byte aligned and shared between
// copies of a Tensor (copying is cheap; use clone() for a deep copy). A Tensor that several owners
// share is treated as immutable: kernels write only to tensors they allocated.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kiln/dtype.h"
#include "kiln/status.h"

namespace kiln {

using Dims = std::vector<int64_t>;

// Product of dims; dims are assumed valid (non-negative, checked by the caller).
int64_t dims_numel(std::span<const int64_t> dims);
// "1x3x224x224"; "scalar" for rank 0.
std::string dims_to_string(std::span<const int64_t> dims);
// Checks that every dim is >= 0 and that the element count and byte size fit in memory limits.
Status check_dims(std::span<const int64_t> dims, DType dtype, std::string_view what);

class Tensor {
 public:
  Tensor() = default;
  // Allocates zero-initialised storage. Dims must be valid (see check_dims).
  Tensor(DType dtype, Dims dims);

  // A tensor over memory someone else owns (an mmap'd file, a protobuf); `owner` keeps it alive.
  static Tensor borrow(DType dtype, Dims dims, const void* data, std::shared_ptr<const void> owner);

  template <typename T>
  static Tensor from_vector(Dims dims, const std::vector<T>& values);
  template <typename T>
  static Tensor scalar(T value) {
    return from_vector<T>({}, std::vector<T>{value});
  }

  bool defined() const { return dtype_ != DType::kUndefined; }
  DType dtype() const { return dtype_; }
  const Dims& dims() const { return dims_; }
  int rank() const { return static_cast<int>(dims_.size()); }
  int64_t dim(int i) const { return dims_[static_cast<size_t>(i)]; }
  int64_t numel() const { return dims_numel(dims_); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }

  void* raw_data() { return data_; }
  const void* raw_data() const { return data_; }
  template <typename T>
  T* data() {
    assert(dtype_of<T> == dtype_ && "Tensor::data<T>: T does not match the dtype");
    return static_cast<T*>(data_);
  }
  template <typename T>
  const T* data() const {
    assert(dtype_of<T> == dtype_ && "Tensor::data<T>: T does not match the dtype");
    return static_cast<const T*>(data_);
  }
  template <typename T>
  std::span<const T> span() const {
    return {data<T>(), static_cast<size_t>(numel())};
  }
  template <typename T>
  std::span<T> span() {
    return {data<T>(), static_cast<size_t>(numel())};
  }

  // Same storage, other dims (numel must match).
  Tensor reshaped(Dims dims) const;
  Tensor clone() const;
  // "float32[1x3x224x224]"
  std::string desc() const;

  // Reads element i as double / int64 whatever the dtype (for shape tensors, scalars, printing).
  double value_as_double(int64_t i) const;
  int64_t value_as_int(int64_t i) const;
  // Copies an integer tensor (any integer dtype) into int64s.
  std::vector<int64_t> to_int64_vector() const;

 private:
  DType dtype_ = DType::kUndefined;
  Dims dims_;
  std::shared_ptr<const void> storage_;
  void* data_ = nullptr;
};

// Element-wise conversion between any two dtypes with C++ types, with ONNX Cast semantics
// (float -> int truncates toward zero; float -> bool is x != 0).
Result<Tensor> cast_tensor(const Tensor& src, DType to);

template <typename T>
Tensor Tensor::from_vector(Dims dims, const std::vector<T>& values) {
  Tensor t(dtype_of<T>, std::move(dims));
  assert(static_cast<size_t>(t.numel()) == values.size());
  T* out = t.data<T>();
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return t;
}

}  // namespace kiln
