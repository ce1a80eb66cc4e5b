#include "options.h"

#include <charconv>

namespace kiln::cli {

Result<std::vector<std::string>> split_list(std::string_view flag, std::string_view value) {
  std::vector<std::string> items;
  std::string cur;
  char quote = 0;
  for (char c : value) {
    if (quote != 0) {
      if (c == quote) quote = 0;
      cur += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      cur += c;
    } else if (c == ',') {
      items.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (quote != 0) return invalid_argument("{}: unterminated quote in '{}'", flag, value);
  items.push_back(std::move(cur));
  return items;
}

namespace {

// "name:rest" or "'na:me':rest" -> {name, rest}.
Result<std::pair<std::string, std::string>> split_name(std::string_view flag,
                                                       std::string_view item) {
  std::string name;
  size_t colon;
  if (!item.empty() && (item[0] == '\'' || item[0] == '"')) {
    const size_t close = item.find(item[0], 1);
    name = std::string(item.substr(1, close - 1));
    colon = close + 1;
    if (colon >= item.size() || item[colon] != ':') {
      return invalid_argument("{}: expected ':' after the quoted name in '{}'", flag, item);
    }
  } else {
    colon = item.rfind(':');
    if (colon == std::string_view::npos) {
      return invalid_argument("{}: '{}' is not of the form name:value", flag, item);
    }
    name = std::string(item.substr(0, colon));
  }
  if (name.empty()) return invalid_argument("{}: empty tensor name in '{}'", flag, item);
  return std::make_pair(name, std::string(item.substr(colon + 1)));
}

}  // namespace

Result<Dims> parse_dims(std::string_view flag, std::string_view text) {
  Dims dims;
  if (text.empty()) return invalid_argument("{}: empty shape", flag);
  if (text == "scalar") return dims;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t end = std::min(text.find('x', pos), text.size());
    const std::string_view part = text.substr(pos, end - pos);
    int64_t d = 0;
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), d);
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size()) {
      return invalid_argument("{}: '{}' in shape '{}' is not a non-negative integer", flag, part,
                              text);
    }
    if (d < 0) return invalid_argument("{}: dimension {} in shape '{}' is negative", flag, d, text);
    dims.push_back(d);
    pos = end + 1;
  }
  return dims;
}

Result<std::map<std::string, Dims>> parse_shapes(std::string_view flag, std::string_view value) {
  std::map<std::string, Dims> out;
  KILN_ASSIGN_OR_RETURN(auto items, split_list(flag, value));
  for (const std::string& item : items) {
    KILN_ASSIGN_OR_RETURN(auto nv, split_name(flag, item));
    KILN_ASSIGN_OR_RETURN(Dims dims, parse_dims(flag, nv.second));
    if (!out.emplace(nv.first, std::move(dims)).second) {
      return invalid_argument("{}: input '{}' is given twice", flag, nv.first);
    }
  }
  return out;
}

Result<std::map<std::string, std::string>> parse_named_files(std::string_view flag,
                                                             std::string_view value) {
  return parse_named_values(flag, value, "file");
}

Result<std::map<std::string, std::string>> parse_named_values(std::string_view flag,
                                                              std::string_view value,
                                                              std::string_view what) {
  std::map<std::string, std::string> out;
  KILN_ASSIGN_OR_RETURN(auto items, split_list(flag, value));
  for (const std::string& item : items) {
    KILN_ASSIGN_OR_RETURN(auto nv, split_name(flag, item));
    if (nv.second.empty()) {
      return invalid_argument("{}: no {} given for '{}'", flag, what, nv.first);
    }
    if (!out.emplace(nv.first, nv.second).second) {
      return invalid_argument("{}: '{}' is given twice", flag, nv.first);
    }
  }
  return out;
}

Result<std::optional<double>> parse_optional_bound(std::string_view flag, std::string_view v,
                                                   double max) {
  if (v.empty()) return std::optional<double>();
  KILN_ASSIGN_OR_RETURN(const double x, parse_real(flag, v));
  if (x < 0 || x > max) return invalid_argument("{} must be in [0, {}], got '{}'", flag, max, v);
  return std::optional<double>(x);
}

Result<double> parse_real(std::string_view flag, std::string_view v) {
  double x = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (v.empty() || ec != std::errc() || ptr != v.data() + v.size() || !std::isfinite(x)) {
    return invalid_argument("{}: '{}' is not a number", flag, v);
  }
  return x;
}

}  // namespace kiln::cli
