#include "quant/layer_precision.h"

#include <algorithm>

namespace kiln::quant {

Result<PrecisionConstraints> parse_precision_constraints(std::string_view text) {
  if (text == "none") return PrecisionConstraints::kNone;
  if (text == "prefer") return PrecisionConstraints::kPrefer;
  if (text == "obey") return PrecisionConstraints::kObey;
  return invalid_argument("precision constraints must be none, prefer or obey, got '{}'", text);
}

std::string_view precision_constraints_name(PrecisionConstraints c) {
  switch (c) {
    case PrecisionConstraints::kPrefer:
      return "prefer";
    case PrecisionConstraints::kObey:
      return "obey";
    case PrecisionConstraints::kNone:
      break;
  }
  return "none";
}

Status check_layer_precision_rules(std::span<const LayerPrecisionRule> rules) {
  for (const LayerPrecisionRule& r : rules) {
    if (r.pattern.empty()) return invalid_argument("a layer precision rule has an empty name");
    if (std::count(r.pattern.begin(), r.pattern.end(), '*') > 1) {
      return invalid_argument("layer name '{}' has more than one '*' wildcard", r.pattern);
    }
    const std::string_view p = r.precision;
    if (p != "fp32" && p != "fp16" && p != "bf16" && p != "int8") {
      return invalid_argument("layer '{}': precision '{}' is not one of fp32, fp16, bf16, int8",
                              r.pattern, r.precision);
    }
  }
  return Status::ok();
}

bool matches_layer_pattern(std::string_view pattern, std::string_view name) {
  const size_t star = pattern.find('*');
  if (star == std::string_view::npos) return pattern == name;
  const std::string_view head = pattern.substr(0, star), tail = pattern.substr(star + 1);
  return name.size() >= head.size() + tail.size() && name.starts_with(head) && name.ends_with(tail);
}

const LayerPrecisionRule* find_layer_rule(std::span<const LayerPrecisionRule> rules,
                                          std::span<const std::string> names) {
  const LayerPrecisionRule* best = nullptr;
  // Exact names rank above every pattern; among patterns, the one with more fixed characters.
  auto rank = [](const LayerPrecisionRule& r) {
    const bool exact = r.pattern.find('*') == std::string::npos;
    return exact ? SIZE_MAX : r.pattern.size();
  };
  for (const LayerPrecisionRule& r : rules) {
    const bool hit = std::any_of(names.begin(), names.end(), [&](const std::string& n) {
      return matches_layer_pattern(r.pattern, n);
    });
    if (hit && (!best || rank(r) > rank(*best))) best = &r;
  }
  return best;
}

}  // namespace kiln::quant
