#include "ops/nhwc.h"

#include "kernels/ref/movement.h"

namespace kiln::ops {

Dims permuted(const Dims& d, std::span<const int64_t> perm) {
  Dims out;
  for (int64_t p : perm) out.push_back(d[static_cast<size_t>(p)]);
  return out;
}

ir::TensorDesc permuted(const ir::TensorDesc& d, std::span<const int64_t> perm) {
  if (!d.has_rank()) return d;
  ir::Shape s;
  for (int64_t p : perm) s.push_back(d.dim(static_cast<int>(p)));
  return ir::TensorDesc::of(d.dtype, std::move(s));
}

Tensor permuted(const Tensor& t, std::span<const int64_t> perm) {
  Tensor out(t.dtype(), permuted(t.dims(), perm));
  kernels::ref::transpose(t.raw_data(), dtype_size(t.dtype()), t.dims(), perm, out.raw_data());
  return out;
}

}  // namespace kiln::ops
