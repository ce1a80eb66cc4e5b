#pragma once
// Per-case deviations from ONNX's default tolerances in the backend test data, each with its reason.
// A case listed here still has to pass, only with the tolerance given.

#include <optional>
#include <string_view>

#include "testing/tensor_compare.h"

namespace kiln::conformance {

struct Expectation {
  std::string_view case_name;  // "node/test_xxx"
  testing::Tolerance tolerance;
  std::string_view reason;
};

std::optional<Expectation> find_expectation(std::string_view case_name);

}  // namespace kiln::conformance
