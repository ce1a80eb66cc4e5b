#include "ir/attribute.h"

#include <cassert>

namespace kiln::ir {

std::string_view attr_type_name(AttrType t) {
  switch (t) {
    case AttrType::kInt:
      return "int";
    case AttrType::kFloat:
      return "float";
    case AttrType::kString:
      return "string";
    case AttrType::kInts:
      return "ints";
    case AttrType::kFloats:
      return "floats";
    case AttrType::kStrings:
      return "strings";
    case AttrType::kTensor:
      return "tensor";
  }
  return "?";
}

AttrType attr_value_type(const AttrValue& v) { return static_cast<AttrType>(v.index()); }

const AttrValue* Attributes::find(std::string_view name) const {
  auto it = map_.find(name);
  return it == map_.end() ? nullptr : &it->second;
}

void Attributes::erase(std::string_view name) {
  auto it = map_.find(name);
  if (it != map_.end()) map_.erase(it);
}

template <typename T>
static const T* get_as(const Attributes& a, std::string_view name) {
  const AttrValue* v = a.find(name);
  if (v == nullptr) return nullptr;
  assert(std::holds_alternative<T>(*v) && "attribute type differs from the op's declaration");
  return std::get_if<T>(v);
}

int64_t Attributes::get_int(std::string_view name, int64_t def) const {
  const auto* v = get_as<int64_t>(*this, name);
  return v ? *v : def;
}
float Attributes::get_float(std::string_view name, float def) const {
  const auto* v = get_as<float>(*this, name);
  return v ? *v : def;
}
std::string Attributes::get_string(std::string_view name, std::string_view def) const {
  const auto* v = get_as<std::string>(*this, name);
  return v ? *v : std::string(def);
}
std::vector<int64_t> Attributes::get_ints(std::string_view name, std::vector<int64_t> def) const {
  const auto* v = get_as<std::vector<int64_t>>(*this, name);
  return v ? *v : def;
}
std::vector<float> Attributes::get_floats(std::string_view name, std::vector<float> def) const {
  const auto* v = get_as<std::vector<float>>(*this, name);
  return v ? *v : def;
}
std::vector<std::string> Attributes::get_strings(std::string_view name) const {
  const auto* v = get_as<std::vector<std::string>>(*this, name);
  return v ? *v : std::vector<std::string>{};
}
const Tensor* Attributes::get_tensor(std::string_view name) const {
  return get_as<Tensor>(*this, name);
}

}  // namespace kiln::ir
