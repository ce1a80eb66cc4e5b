#pragma once
// The one place an engine tensor becomes float32 for comparison with the reference. Engines keep
// some tensors in other dtypes (INT8 engines: uint8/int8 activations with a scale); those are
// "not comparable" until their conversion is added here, and every caller then compares them.

#include <string>
#include <variant>
#include <vector>

#include "base/tensor_view.h"
#include "runtime/engine.h"

namespace kiln::cli::compare {

struct NotComparable {
  std::string reason;  // e.g. "not comparable (uint8)"
};

// The values of engine value `v` (its memory `view`, as the context shows it) as float32, in the
// reference's layout; NotComparable for dtypes without a conversion.
std::variant<std::vector<float>, NotComparable> engine_tensor_as_float(const runtime::Engine& e,
                                                                       ir::ValueId v,
                                                                       const TensorView& view);

}  // namespace kiln::cli::compare
