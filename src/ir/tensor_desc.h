#pragma once
// What the graph knows about a tensor before running: dtype and a shape whose dims may be known
// numbers, symbols ("batch") or unknown. Rank itself may be unknown.

#include <optional>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "base/tensor.h"

namespace kiln::ir {

struct Dim {
  int64_t value = -1;  // >= 0 when known
  std::string symbol;  // non-empty for a named symbolic dim; empty + value < 0 means unknown

  static Dim known(int64_t v) { return Dim{v, {}}; }
  static Dim named(std::string s) { return Dim{-1, std::move(s)}; }
  static Dim unknown() { return Dim{}; }
  bool is_known() const { return value >= 0; }
  bool operator==(const Dim& o) const { return value == o.value && symbol == o.symbol; }
  std::string to_string() const;  // "224", "batch" or "?"
};

using Shape = std::vector<Dim>;

// Dims provably equal: the same known number, or the same named symbol (one symbol is one value
// throughout the graph). Unnamed unknown dims are never provably equal.
bool same_dim(const Dim& a, const Dim& b);

// One element of a small integer tensor computed from shapes (ops/dims_values.h): a number (which
// may be negative, as Reshape's -1), the value of a symbolic dim, or unknown.
struct SymInt {
  std::optional<int64_t> number;
  std::string symbol;  // when no number: non-empty for a symbol's value, empty for unknown

  static SymInt of(int64_t v) { return SymInt{v, {}}; }
  static SymInt of(const Dim& d) { return d.is_known() ? of(d.value) : SymInt{{}, d.symbol}; }
  static SymInt unknown() { return SymInt{}; }
  // The dim this element sizes: numbers >= 0 and symbols; unknown for negatives and unknowns.
  Dim as_dim() const;
  bool operator==(const SymInt& o) const { return number == o.number && symbol == o.symbol; }
  std::string to_string() const;  // "-1", "batch" or "?"
};
using SymInts = std::vector<SymInt>;

struct TensorDesc {
  DType dtype = DType::kUndefined;
  std::optional<Shape> shape;  // nullopt: rank unknown

  static TensorDesc of(DType t, Shape s) { return TensorDesc{t, std::move(s)}; }
  static TensorDesc of_dims(DType t, const Dims& dims);
  static TensorDesc unknown_shape(DType t) { return TensorDesc{t, std::nullopt}; }

  bool has_rank() const { return shape.has_value(); }
  int rank() const { return shape ? static_cast<int>(shape->size()) : -1; }
  const Dim& dim(int i) const { return (*shape)[static_cast<size_t>(i)]; }
  // True when the rank and every dim are known numbers.
  bool is_static() const;
  // The dims as numbers; only valid when is_static().
  Dims static_dims() const;
  // "float32[batch,3,224,224]", "float32[?]" for unknown rank.
  std::string to_string() const;
};

}  // namespace kiln::ir
