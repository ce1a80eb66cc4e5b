#include "io/tensor_json.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "io/file_util.h"

namespace kiln::io {
namespace {

using nlohmann::json;

json non_finite(double v) {
  if (std::isnan(v)) return "nan";
  return v > 0 ? "inf" : "-inf";
}

// A float32 value as the double whose shortest decimal form is the float's shortest decimal form,
// so that the JSON shows "0.1" rather than the double expansion 0.10000000149011612.
json float_value(float v) {
  if (!std::isfinite(v)) return non_finite(v);
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  assert(ec == std::errc());
  *end = '\0';
  return std::strtod(buf, nullptr);
}

json double_value(double v) {
  if (!std::isfinite(v)) return non_finite(v);
  return v;
}

float bf16_to_float(uint16_t bits) {
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, sizeof f);
  return f;
}

template <typename T>
void append_values(const Tensor& t, json* values) {
  for (const T& x : t.span<T>()) {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, Half>) {
      values->push_back(float_value(static_cast<float>(x)));
    } else if constexpr (std::is_same_v<T, double>) {
      values->push_back(double_value(x));
    } else {
      values->push_back(x);  // integers and bool
    }
  }
}

Result<json> values_to_json(const Tensor& t) {
  json values = json::array();
  if (t.dtype() == DType::kBF16) {
    const auto* bits = static_cast<const uint16_t*>(t.raw_data());
    for (int64_t i = 0; i < t.numel(); ++i) values.push_back(float_value(bf16_to_float(bits[i])));
    return values;
  }
  const bool known = dispatch_dtype(t.dtype(), [&]<typename T>() { append_values<T>(t, &values); });
  if (!known) return unsupported("{} values cannot be written as JSON numbers", t.desc());
  return values;
}

// Names come from models and may hold invalid UTF-8, on which json::dump() would throw: replace
// invalid sequences with U+FFFD once here, so that the returned document always dumps.
std::string valid_utf8(std::string_view name) {
  const std::string quoted =
      json(std::string(name)).dump(-1, ' ', false, json::error_handler_t::replace);
  return json::parse(quoted).get<std::string>();
}

}  // namespace

Result<nlohmann::json> tensor_to_json(const Tensor& tensor, std::string_view name) {
  Result<json> values = values_to_json(tensor);
  if (!values.is_ok()) return values.status().with_context(fmt::format("output '{}'", name));
  const std::string dims = tensor.rank() == 0 ? "" : dims_to_string(tensor.dims());
  return json{
      {"name", valid_utf8(name)}, {"dimensions", dims}, {"values", std::move(values).value()}};
}

Result<nlohmann::json> outputs_to_json(std::span<const std::string> names,
                                       std::span<const Tensor> tensors) {
  if (names.size() != tensors.size()) {
    return invalid_argument("outputs_to_json: {} names for {} tensors", names.size(),
                            tensors.size());
  }
  json out = json::array();
  for (size_t i = 0; i < names.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(json one, tensor_to_json(tensors[i], names[i]));
    out.push_back(std::move(one));
  }
  return out;
}

Status write_outputs_json(const std::filesystem::path& path, std::span<const std::string> names,
                          std::span<const Tensor> tensors) {
  Result<json> doc = outputs_to_json(names, tensors);
  if (!doc.is_ok()) return doc.status().with_context(fmt::format("writing '{}'", path.string()));
  return write_file_atomic(path, doc->dump(2) + "\n");
}

}  // namespace kiln::io
