#include "compare/as_float.h"

#include <fmt/format.h>

#include <cstring>
#include <optional>
#include <utility>

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

namespace {

// The (scale, zero point) of a uint8 tensor an INT8 engine writes: an INT8 layer's requantized
// output (y_scale, y_zero_point) or a QuantizeLinear's (constant scale and zero point inputs).
std::optional<std::pair<float, int32_t>> uint8_encoding(const runtime::Engine& e, ir::ValueId v) {
  const ir::Graph& g = e.graph();
  for (const ir::Node& n : g.nodes) {
    if (n.outputs.empty() || n.outputs[0] != v) continue;
    if (n.domain == "kiln" && (n.op_type == "QConv" || n.op_type == "QGemm")) {
      return std::pair{n.attrs.get_float("y_scale", 1.0f),
                       static_cast<int32_t>(n.attrs.get_int("y_zero_point", 0))};
    }
    if (n.domain.empty() && n.op_type == "QuantizeLinear" && n.inputs.size() == 3) {
      const Tensor* scale = g.value(n.inputs[1]).constant();
      const Tensor* zero = g.value(n.inputs[2]).constant();
      if (scale && zero && scale->numel() == 1 && zero->numel() == 1 &&
          scale->dtype() == DType::kF32) {
        return std::pair{scale->data<float>()[0], static_cast<int32_t>(zero->value_as_int(0))};
      }
    }
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::variant<std::vector<float>, NotComparable> engine_tensor_as_float(const runtime::Engine& e,
                                                                       ir::ValueId v,
                                                                       const TensorView& view) {
  const auto n = static_cast<size_t>(dims_numel(view.dims));
  std::vector<float> out(n);
  if (view.dtype == DType::kU8) {
    const std::optional<std::pair<float, int32_t>> enc = uint8_encoding(e, v);
    if (!enc) return NotComparable{"not comparable (uint8 without a known scale)"};
    const auto* q = static_cast<const uint8_t*>(view.data);
    for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(q[i] - enc->second) * enc->first;
    return out;
  }
  if (view.dtype != DType::kF32) {
    return NotComparable{fmt::format("not comparable ({})", dtype_name(view.dtype))};
  }
  if (n) std::memcpy(out.data(), view.data, n * sizeof(float));
  return out;
}

}  // namespace kiln::cli::compare
