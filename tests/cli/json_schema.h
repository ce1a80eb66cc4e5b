#pragma once
// A small JSON Schema checker for tests: the subset the exec exports' schemas use — "type" (a name
// or a list), "properties", "required", "additionalProperties" (false or a schema), "items",
// "prefixItems", "enum", "const", "minimum", "minItems", "maxItems", "anyOf" and "$ref" to
// "#/definitions/<name>".

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kiln::testing {

// Every violation, as "<path>: <what>"; empty when `value` conforms to `schema`.
std::vector<std::string> check_schema(const nlohmann::json& value, const nlohmann::json& schema);

}  // namespace kiln::testing
