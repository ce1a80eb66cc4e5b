#include "expectations.h"

#include <array>

namespace kiln::conformance {
namespace {

constexpr std::array<Expectation, 0> kExpectations{{}};

}  // namespace

std::optional<Expectation> find_expectation(std::string_view case_name) {
  for (const Expectation& e : kExpectations) {
    if (e.case_name == case_name) return e;
  }
  return std::nullopt;
}

}  // namespace kiln::conformance
