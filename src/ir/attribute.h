#pragma once
// Typed node attributes. The importer checks every attribute against the op's declared type, so the
// getters below can trust the stored type: asking for the wrong type is a kiln bug (assert).

#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/tensor.h"

namespace kiln::ir {

enum class AttrType { kInt, kFloat, kString, kInts, kFloats, kStrings, kTensor };
std::string_view attr_type_name(AttrType t);

using AttrValue = std::variant<int64_t, float, std::string, std::vector<int64_t>,
                               std::vector<float>, std::vector<std::string>, Tensor>;
AttrType attr_value_type(const AttrValue& v);

class Attributes {
 public:
  void set(std::string name, AttrValue v) { map_[std::move(name)] = std::move(v); }
  bool has(std::string_view name) const { return map_.find(name) != map_.end(); }
  const AttrValue* find(std::string_view name) const;
  void erase(std::string_view name);

  int64_t get_int(std::string_view name, int64_t def) const;
  float get_float(std::string_view name, float def) const;
  std::string get_string(std::string_view name, std::string_view def) const;
  std::vector<int64_t> get_ints(std::string_view name, std::vector<int64_t> def = {}) const;
  std::vector<float> get_floats(std::string_view name, std::vector<float> def = {}) const;
  std::vector<std::string> get_strings(std::string_view name) const;
  // nullptr when absent.
  const Tensor* get_tensor(std::string_view name) const;

  const std::map<std::string, AttrValue, std::less<>>& all() const { return map_; }

 private:
  std::map<std::string, AttrValue, std::less<>> map_;
};

}  // namespace kiln::ir
