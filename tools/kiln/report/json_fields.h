#pragma once
// Typed reads of a JSON document's fields whose errors name the file and the field's full path
// ("runs/a.json: field 'results.latency_ms.median': expected a number, got a string (\"fast\")"),
// for kiln report's readers of summaries, sweep indexes and profiles.

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace kiln::cli::report {

// kValue: present and not null. kNullable: present, may be null. kOptional: may be absent or null.
enum class Need { kValue, kNullable, kOptional };

class Fields {
 public:
  // `node` must outlive the Fields; `path` is the node's own path ("" for the document).
  Fields(const nlohmann::json& node, std::string file, std::string path = "")
      : node_(&node), file_(std::move(file)), path_(std::move(path)) {}

  const nlohmann::json& node() const { return *node_; }
  const std::string& file() const { return file_; }
  // "results.latency_ms" + "median"; array elements as "[3]".
  std::string path_of(std::string_view key) const;
  Status error(std::string_view key, std::string_view what) const;

  // The member, or nullptr when absent (or when this node is not an object).
  const nlohmann::json* find(std::string_view key) const;

  // The member as an object's Fields; nullopt for null/absent when `need` allows it.
  Result<std::optional<Fields>> object(std::string_view key, Need need) const;
  // The member, checked to be an array; nullptr for null/absent when `need` allows it.
  Result<const nlohmann::json*> array(std::string_view key, Need need) const;
  // Element `i` of an array node, as Fields.
  Fields element(size_t i) const;

  Result<std::optional<double>> number(std::string_view key, Need need,
                                       double min = -std::numeric_limits<double>::infinity()) const;
  Result<std::optional<int64_t>> integer(std::string_view key, Need need,
                                         int64_t min = std::numeric_limits<int64_t>::min()) const;
  // A string member; "" for null/absent when `need` allows it.
  Result<std::string> text(std::string_view key, Need need) const;
  Result<std::optional<bool>> boolean(std::string_view key, Need need) const;

 private:
  // The member checked against `need`: nullptr for an allowed null/absent.
  Result<const nlohmann::json*> member(std::string_view key, Need need) const;

  const nlohmann::json* node_;
  std::string file_;
  std::string path_;
};

// "a string (\"fast\")", "null", "an array": what a wrong value is, for error messages.
std::string describe_json(const nlohmann::json& value);

}  // namespace kiln::cli::report
