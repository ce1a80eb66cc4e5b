#pragma once
// The one place an engine tensor becomes float32 for comparison with the reference. Engines keep
// some tensors in other dtypes (INT8 engines: uint8/int8 activations with a scale) or layouts
// (blocked nChw16c tensors between kiln.ConvNchw16c layers); those are "not comparable" until
// their conversion is added here, and every caller then compares them.

#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "base/tensor_view.h"
#include "runtime/engine.h"

namespace kiln::cli::compare {

struct NotComparable {
  std::string reason;  // e.g. "not comparable (uint8)"
};

// The name of the reference tensor engine value `v` holds, or "" for none: its own name, or for a
// uint8 tensor an INT8 layer writes in place of a float one (named "<tensor>_u8", docs/
// quantization.md) or a blocked twin of an NCHW tensor ("<tensor>.nchw16c", passes/
// nchw16c_layout.h) that tensor's name. `has` says whether the reference has a name.
std::string reference_tensor_name(const runtime::Engine& e, ir::ValueId v,
                                  const std::function<bool(const std::string&)>& has);

// An engine tensor's values in the reference's layout, and its dims there.
struct FloatTensor {
  std::vector<float> values;
  Dims dims;
};

// The values of engine value `v` (its memory `view`, as the context shows it) as float32, in the
// reference's layout: float32 as is, a blocked tensor reordered to NCHW (its padding channels
// dropped), an INT8 engine's uint8 tensors dequantized with the scale and zero point of the layer
// that wrote them; NotComparable for other dtypes.
std::variant<FloatTensor, NotComparable> engine_tensor_as_float(const runtime::Engine& e,
                                                                ir::ValueId v,
                                                                const TensorView& view);

}  // namespace kiln::cli::compare
