#include "json_schema.h"

#include <fmt/format.h>

namespace kiln::testing {
namespace {

using nlohmann::json;

bool has_type(const json& v, const std::string& type) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "number") return v.is_number();
  if (type == "integer") return v.is_number_integer();
  if (type == "boolean") return v.is_boolean();
  if (type == "null") return v.is_null();
  return false;
}

class Checker {
 public:
  explicit Checker(const json& root) : root_(root) {}

  void check(const json& v, const json& s, const std::string& path) {
    if (s.contains("$ref")) {
      const std::string ref = s["$ref"];
      const std::string prefix = "#/definitions/";
      if (ref.rfind(prefix, 0) != 0 || !root_["definitions"].contains(ref.substr(prefix.size()))) {
        errors.push_back(fmt::format("{}: unresolvable $ref '{}'", path, ref));
        return;
      }
      check(v, root_["definitions"][ref.substr(prefix.size())], path);
      return;
    }
    if (s.contains("anyOf")) {
      bool any = false;
      for (const json& alternative : s["anyOf"]) {
        Checker sub(root_);
        sub.check(v, alternative, path);
        any |= sub.errors.empty();
      }
      if (!any) errors.push_back(fmt::format("{}: matches no schema of anyOf", path));
    }
    if (s.contains("type") && !type_ok(v, s["type"])) {
      errors.push_back(fmt::format("{}: {} is not of type {}", path, v.dump(), s["type"].dump()));
      return;
    }
    if (s.contains("const") && v != s["const"]) {
      errors.push_back(fmt::format("{}: {} is not {}", path, v.dump(), s["const"].dump()));
    }
    if (s.contains("enum") && std::find(s["enum"].begin(), s["enum"].end(), v) == s["enum"].end()) {
      errors.push_back(fmt::format("{}: {} is not one of {}", path, v.dump(), s["enum"].dump()));
    }
    if (s.contains("minimum") && v.is_number() && v.get<double>() < s["minimum"].get<double>()) {
      errors.push_back(fmt::format("{}: {} < minimum {}", path, v.dump(), s["minimum"].dump()));
    }
    if (v.is_object()) check_object(v, s, path);
    if (v.is_array()) check_array(v, s, path);
  }

  std::vector<std::string> errors;

 private:
  static bool type_ok(const json& v, const json& type) {
    if (type.is_string()) return has_type(v, type.get<std::string>());
    for (const json& t : type) {
      if (has_type(v, t.get<std::string>())) return true;
    }
    return false;
  }

  void check_object(const json& v, const json& s, const std::string& path) {
    for (const json& r : s.value("required", json::array())) {
      if (!v.contains(r.get<std::string>())) {
        errors.push_back(fmt::format("{}: missing '{}'", path, r.get<std::string>()));
      }
    }
    const json props = s.value("properties", json::object());
    for (const auto& [key, value] : v.items()) {
      const std::string sub = path + "." + key;
      if (props.contains(key)) {
        check(value, props[key], sub);
      } else if (s.contains("additionalProperties")) {
        const json& extra = s["additionalProperties"];
        if (extra.is_boolean() && !extra.get<bool>()) {
          errors.push_back(fmt::format("{}: unexpected key", sub));
        } else if (extra.is_object()) {
          check(value, extra, sub);
        }
      }
    }
  }

  void check_array(const json& v, const json& s, const std::string& path) {
    if (s.contains("minItems") && v.size() < s["minItems"].get<size_t>()) {
      errors.push_back(
          fmt::format("{}: {} items < minItems {}", path, v.size(), s["minItems"].dump()));
    }
    if (s.contains("maxItems") && v.size() > s["maxItems"].get<size_t>()) {
      errors.push_back(
          fmt::format("{}: {} items > maxItems {}", path, v.size(), s["maxItems"].dump()));
    }
    const json prefix = s.value("prefixItems", json::array());
    for (size_t i = 0; i < v.size(); ++i) {
      if (i < prefix.size()) {
        check(v[i], prefix[i], fmt::format("{}[{}]", path, i));
      } else if (s.contains("items")) {
        check(v[i], s["items"], fmt::format("{}[{}]", path, i));
      }
    }
  }

  const json& root_;
};

}  // namespace

std::vector<std::string> check_schema(const json& value, const json& schema) {
  Checker c(schema);
  c.check(value, schema, "$");
  return c.errors;
}

}  // namespace kiln::testing
