#pragma once
// Tolerance comparison of tensors, shared by op tests and the conformance runner.

#include <string>

#include "base/tensor.h"

namespace kiln::testing {

struct Tolerance {
  double rtol = 1e-3;  // ONNX backend test defaults
  double atol = 1e-7;
};

// Empty string when |actual - expected| <= atol + rtol * |expected| everywhere (NaN matches NaN,
// inf matches the same inf) and dtype/dims agree; otherwise a message naming the first bad element
// and the worst error.
std::string compare_tensors(const Tensor& actual, const Tensor& expected, Tolerance tol = {});

}  // namespace kiln::testing
