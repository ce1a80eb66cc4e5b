#include "ir/tensor_desc.h"

#include <fmt/format.h>

namespace kiln::ir {

bool same_dim(const Dim& a, const Dim& b) {
  if (a.is_known() || b.is_known()) return a.is_known() && b.is_known() && a.value == b.value;
  return !a.symbol.empty() && a.symbol == b.symbol;
}

std::string Dim::to_string() const {
  if (is_known()) return std::to_string(value);
  return symbol.empty() ? "?" : symbol;
}

Dim SymInt::as_dim() const {
  if (number) return *number >= 0 ? Dim::known(*number) : Dim::unknown();
  return Dim{-1, symbol};
}

std::string SymInt::to_string() const {
  if (number) return std::to_string(*number);
  return symbol.empty() ? "?" : symbol;
}

TensorDesc TensorDesc::of_dims(DType t, const Dims& dims) {
  Shape s;
  s.reserve(dims.size());
  for (int64_t d : dims) s.push_back(Dim::known(d));
  return TensorDesc{t, std::move(s)};
}

bool TensorDesc::is_static() const {
  if (!shape) return false;
  for (const Dim& d : *shape) {
    if (!d.is_known()) return false;
  }
  return true;
}

Dims TensorDesc::static_dims() const {
  assert(is_static());
  Dims out;
  out.reserve(shape->size());
  for (const Dim& d : *shape) out.push_back(d.value);
  return out;
}

std::string TensorDesc::to_string() const {
  if (!shape) return fmt::format("{}[?rank]", dtype_name(dtype));
  std::vector<std::string> parts;
  for (const Dim& d : *shape) parts.push_back(d.to_string());
  return fmt::format("{}[{}]", dtype_name(dtype), fmt::join(parts, ","));
}

}  // namespace kiln::ir
