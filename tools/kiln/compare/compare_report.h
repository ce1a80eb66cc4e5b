#pragma once
// Output of `kiln compare`: the table on stdout, the tolerance checks, and the JSON (all figures,
// plus per engine an `accuracy` object in the shape of the exec summary's, schema version 3).

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "compare/compare_result.h"

namespace kiln::cli::compare {

void print_outputs(const CompareResult& r, std::ostream& out);
// The `top` layers of each engine that add the most error, and how many could not be compared.
void print_layers(const CompareResult& r, int top, std::ostream& out);

// The tolerance flags' values (empty: not given) as bounds; errors name the flag.
Result<Bounds> parse_bounds(std::string_view atol, std::string_view rtol, std::string_view cosine,
                            std::string_view top1);

// One line per violated bound: engine, output, metric, value and bound.
std::vector<std::string> check_bounds(const CompareResult& r, const Bounds& b);

// The summary schema's `accuracy` object for engine `e` (docs/report.md).
nlohmann::ordered_json accuracy_json(const CompareResult& r, const EngineResult& e);
nlohmann::ordered_json compare_json(const CompareResult& r, const Bounds& b,
                                    const std::vector<std::string>& failures);

}  // namespace kiln::cli::compare
