#include "base/tensor.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

namespace kiln {
namespace {

constexpr size_t kAlignment = 64;
// Refuse single tensors above this: a corrupt shape should fail cleanly, not exhaust memory.
constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 36;  // 64 GiB

std::shared_ptr<void> allocate(size_t bytes) {
  const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void* p = ::operator new (rounded == 0 ? kAlignment : rounded, std::align_val_t{kAlignment});
  std::memset(p, 0, rounded == 0 ? kAlignment : rounded);
  return {p, [](void* q) { ::operator delete (q, std::align_val_t{kAlignment}); }};
}

}  // namespace

int64_t dims_numel(std::span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string dims_to_string(std::span<const int64_t> dims) {
  if (dims.empty()) return "scalar";
  return fmt::format("{}", fmt::join(dims, "x"));
}

Status check_dims(std::span<const int64_t> dims, DType dtype, std::string_view what) {
  uint64_t n = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      return invalid_argument("{}: dimension {} is negative ({})", what, i, dims[i]);
    }
    const auto d = static_cast<uint64_t>(dims[i]);
    if (d != 0 && n > std::numeric_limits<uint64_t>::max() / d) {
      return invalid_argument("{}: shape {} overflows the element count", what,
                              dims_to_string(dims));
    }
    n *= d;
  }
  const uint64_t elem = std::max<uint64_t>(dtype_size(dtype), 1);
  if (n > kMaxTensorBytes / elem) {
    return invalid_argument("{}: shape {} of {} needs more than {} GiB", what, dims_to_string(dims),
                            dtype_name(dtype), kMaxTensorBytes >> 30);
  }
  return Status::ok();
}

Tensor::Tensor(DType dtype, Dims dims) : dtype_(dtype), dims_(std::move(dims)) {
  assert(check_dims(dims_, dtype_, "tensor").is_ok());
  auto storage = allocate(nbytes());
  data_ = storage.get();
  storage_ = std::move(storage);
}

Tensor Tensor::borrow(DType dtype, Dims dims, const void* data, std::shared_ptr<const void> owner) {
  Tensor t;
  t.dtype_ = dtype;
  t.dims_ = std::move(dims);
  t.storage_ = std::move(owner);
  t.data_ = const_cast<void*>(data);  // borrowed tensors are read-only by convention
  return t;
}

Tensor Tensor::reshaped(Dims dims) const {
  assert(dims_numel(dims) == numel());
  Tensor t = *this;
  t.dims_ = std::move(dims);
  return t;
}

Tensor Tensor::clone() const {
  Tensor t(dtype_, dims_);
  if (nbytes() > 0) std::memcpy(t.data_, data_, nbytes());
  return t;
}

std::string Tensor::desc() const {
  return fmt::format("{}[{}]", dtype_name(dtype_), dims_to_string(dims_));
}

double Tensor::value_as_double(int64_t i) const {
  double v = 0;
  dispatch_dtype(dtype_,
                 [&]<typename T>() { v = static_cast<double>(static_cast<const T*>(data_)[i]); });
  return v;
}

int64_t Tensor::value_as_int(int64_t i) const {
  int64_t v = 0;
  dispatch_dtype(dtype_, [&]<typename T>() {
    if constexpr (std::is_same_v<T, Half>) {
      v = static_cast<int64_t>(static_cast<float>(static_cast<const T*>(data_)[i]));
    } else {
      v = static_cast<int64_t>(static_cast<const T*>(data_)[i]);
    }
  });
  return v;
}

std::vector<int64_t> Tensor::to_int64_vector() const {
  std::vector<int64_t> out(static_cast<size_t>(numel()));
  for (int64_t i = 0; i < numel(); ++i) out[static_cast<size_t>(i)] = value_as_int(i);
  return out;
}

namespace {

template <typename To, typename From>
To convert_one(From x) {
  if constexpr (std::is_same_v<To, bool>) {
    if constexpr (std::is_same_v<From, Half>) {
      return static_cast<float>(x) != 0.0f;
    } else {
      return x != From{};
    }
  } else if constexpr (std::is_same_v<To, Half>) {
    return Half(static_cast<float>(x));
  } else if constexpr (std::is_same_v<From, Half>) {
    return static_cast<To>(static_cast<float>(x));
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    // Out-of-range float -> int is UB in C++; ONNX leaves it undefined, we saturate.
    const double d = static_cast<double>(x);
    if (d != d) return To{0};
    if (d <= static_cast<double>(std::numeric_limits<To>::lowest()))
      return std::numeric_limits<To>::lowest();
    if (d >= static_cast<double>(std::numeric_limits<To>::max()))
      return std::numeric_limits<To>::max();
    return static_cast<To>(d);
  } else {
    return static_cast<To>(x);
  }
}

}  // namespace

Result<Tensor> cast_tensor(const Tensor& src, DType to) {
  if (src.dtype() == to) return src;
  Tensor dst(to, src.dims());
  bool ok = false;
  dispatch_dtype(src.dtype(), [&]<typename From>() {
    ok = dispatch_dtype(to, [&]<typename To>() {
      const From* in = src.data<From>();
      To* out = dst.data<To>();
      for (int64_t i = 0; i < src.numel(); ++i) out[i] = convert_one<To, From>(in[i]);
    });
  });
  if (!ok) {
    return unsupported("cannot cast {} to {}", src.desc(), dtype_name(to));
  }
  return dst;
}

}  // namespace kiln
