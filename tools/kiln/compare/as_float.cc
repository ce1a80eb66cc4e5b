#include "compare/as_float.h"

#include <fmt/format.h>

#include <cstring>

namespace kiln::cli::compare {

std::variant<std::vector<float>, NotComparable> engine_tensor_as_float(const runtime::Engine& e,
                                                                       ir::ValueId v,
                                                                       const TensorView& view) {
  (void)e;  // INT8 dequantization will read the value's scale from the engine's plan.
  (void)v;
  if (view.dtype != DType::kF32) {
    return NotComparable{fmt::format("not comparable ({})", dtype_name(view.dtype))};
  }
  const auto n = static_cast<size_t>(dims_numel(view.dims));
  std::vector<float> out(n);
  if (n) std::memcpy(out.data(), view.data, n * sizeof(float));
  return out;
}

}  // namespace kiln::cli::compare
