#include "report/json_fields.h"

#include <fmt/format.h>

#include <cmath>

namespace kiln::cli::report {

using json = nlohmann::json;

std::string describe_json(const json& v) {
  const auto snippet = [](std::string s) {
    if (s.size() > 40) s = s.substr(0, 37) + "...";
    return s;
  };
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return fmt::format("a string ({})", snippet(v.dump()));
    case json::value_t::boolean:
      return fmt::format("a boolean ({})", v.dump());
    default:
      return fmt::format("a number ({})", snippet(v.dump()));
  }
}

std::string Fields::path_of(std::string_view key) const {
  if (path_.empty()) return std::string(key);
  if (!key.empty() && key.front() == '[') return path_ + std::string(key);
  return fmt::format("{}.{}", path_, key);
}

Status Fields::error(std::string_view key, std::string_view what) const {
  return invalid_argument("{}: field '{}': {}", file_, path_of(key), what);
}

const json* Fields::find(std::string_view key) const {
  if (!node_->is_object()) return nullptr;
  auto it = node_->find(std::string(key));
  return it == node_->end() ? nullptr : &*it;
}

Result<const json*> Fields::member(std::string_view key, Need need) const {
  const json* v = find(key);
  if (v == nullptr) {
    if (need == Need::kOptional) return static_cast<const json*>(nullptr);
    return error(key, "missing");
  }
  if (v->is_null()) {
    if (need == Need::kValue) return error(key, "is null; a value is required");
    return static_cast<const json*>(nullptr);
  }
  return v;
}

Result<std::optional<Fields>> Fields::object(std::string_view key, Need need) const {
  KILN_ASSIGN_OR_RETURN(const json* v, member(key, need));
  if (v == nullptr) return std::optional<Fields>();
  if (!v->is_object()) return error(key, "expected an object, got " + describe_json(*v));
  return std::optional<Fields>(Fields(*v, file_, path_of(key)));
}

Result<const json*> Fields::array(std::string_view key, Need need) const {
  KILN_ASSIGN_OR_RETURN(const json* v, member(key, need));
  if (v != nullptr && !v->is_array()) {
    return error(key, "expected an array, got " + describe_json(*v));
  }
  return v;
}

Fields Fields::element(size_t i) const {
  return Fields((*node_)[i], file_, fmt::format("{}[{}]", path_, i));
}

Result<std::optional<double>> Fields::number(std::string_view key, Need need, double min) const {
  KILN_ASSIGN_OR_RETURN(const json* v, member(key, need));
  if (v == nullptr) return std::optional<double>();
  if (!v->is_number()) return error(key, "expected a number, got " + describe_json(*v));
  const double d = v->get<double>();
  if (!std::isfinite(d)) return error(key, "is not a finite number");
  if (d < min) return error(key, fmt::format("is {}; the least allowed is {}", d, min));
  return std::optional<double>(d);
}

Result<std::optional<int64_t>> Fields::integer(std::string_view key, Need need, int64_t min) const {
  KILN_ASSIGN_OR_RETURN(const json* v, member(key, need));
  if (v == nullptr) return std::optional<int64_t>();
  if (!v->is_number_integer()) {
    return error(key, "expected an integer, got " + describe_json(*v));
  }
  if (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t{INT64_MAX}) {
    return error(key, "is too large");
  }
  const int64_t i = v->get<int64_t>();
  if (i < min) return error(key, fmt::format("is {}; the least allowed is {}", i, min));
  return std::optional<int64_t>(i);
}

Result<std::string> Fields::text(std::string_view key, Need need) const {
  KILN_ASSIGN_OR_RETURN(const json* v, member(key, need));
  if (v == nullptr) return std::string();
  if (!v->is_string()) return error(key, "expected a string, got " + describe_json(*v));
  return v->get<std::string>();
}

Result<std::optional<bool>> Fields::boolean(std::string_view key, Need need) const {
  KILN_ASSIGN_OR_RETURN(const json* v, member(key, need));
  if (v == nullptr) return std::optional<bool>();
  if (!v->is_boolean()) return error(key, "expected true or false, got " + describe_json(*v));
  return std::optional<bool>(v->get<bool>());
}

}  // namespace kiln::cli::report
