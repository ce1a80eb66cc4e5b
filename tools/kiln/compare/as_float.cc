#include "compare/as_float.h"

#include <fmt/format.h>

#include <cstring>

namespace kiln::cli::compare {

std::string reference_tensor_name(const runtime::Engine& e, ir::ValueId v,
                                  const std::function<bool(const std::string&)>& has) {
  const ir::Value& value = e.graph().value(v);
  if (has(value.name)) return value.name;
  constexpr std::string_view kSuffix = "_u8";
  const std::string& n = value.name;
  if (value.desc.dtype == DType::kU8 && n.size() > kSuffix.size() && n.ends_with(kSuffix)) {
    std::string base = n.substr(0, n.size() - kSuffix.size());
    if (has(base)) return base;
  }
  return "";
}

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
