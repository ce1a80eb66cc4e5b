#include "testing/tensor_compare.h"

#include <fmt/format.h>

#include <cmath>

namespace kiln::testing {

std::string compare_tensors(const Tensor& actual, const Tensor& expected, Tolerance tol) {
  if (actual.dtype() != expected.dtype() || actual.dims() != expected.dims()) {
    return fmt::format("expected {}, got {}", expected.desc(), actual.desc());
  }
  int64_t bad = 0;
  int64_t first_bad = -1;
  double worst = 0;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    const double a = actual.value_as_double(i);
    const double e = expected.value_as_double(i);
    if (std::isnan(a) && std::isnan(e)) continue;
    if (std::isinf(e) || std::isinf(a)) {
      if (a == e) continue;
    }
    const double err = std::fabs(a - e);
    if (!(err <= tol.atol + tol.rtol * std::fabs(e))) {
      if (first_bad < 0) first_bad = i;
      ++bad;
      worst = std::max(worst, std::isnan(err) ? INFINITY : err);
    }
  }
  if (bad == 0) return {};
  return fmt::format(
      "{} of {} elements differ (rtol {}, atol {}); first at flat index {}: got {}, "
      "expected {}; worst abs error {}",
      bad, actual.numel(), tol.rtol, tol.atol, first_bad, actual.value_as_double(first_bad),
      expected.value_as_double(first_bad), worst);
}

}  // namespace kiln::testing
