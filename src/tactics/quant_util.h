#pragma once
// What the kiln.QConv / kiln.QGemm tactics share (tactics/builtin_quant.cc, tactics/x86): the
// checks every one of them makes, and the node's epilogue (ops/kiln_quant.h) as kernel
// parameters. Inputs: 0 X / A (uint8), 1 W / B (int8, constant), 2 scales (float32, constant),
// 3 bias (float32, constant, optional), 4 residual Z (float32 or uint8, optional).

#include <span>
#include <string>

#include "base/status.h"
#include "base/tensor_view.h"
#include "kernels/ref/qconv.h"
#include "tactics/tactic.h"

namespace kiln::tactics {

inline constexpr size_t kQuantScaleInput = 2;
inline constexpr size_t kQuantBiasInput = 3;
inline constexpr size_t kQuantResidualInput = 4;

// "x" for kiln.QConv, "a" for kiln.QGemm: the prefix of the input's scale and zero point.
std::string_view quant_input_prefix(const ir::Node& node);

// "" when the layer's dtypes, constants and attributes are what the INT8 kernels take (the op's
// shape function checks the same; a tactic re-checks what it relies on); else why not.
std::string quant_why_not(const LayerSpec& spec);

// The epilogue's attributes (scales, zero points, activation, output type); the pointers stay
// null until bind_quant_inputs().
Result<kernels::ref::QuantEpilogue> quant_epilogue_of(const LayerSpec& spec);

// Sets the epilogue's scale, bias and residual pointers from a run's inputs.
void bind_quant_inputs(kernels::ref::QuantEpilogue& e, std::span<const TensorView> in);

// The engine's prepacked bytes when the tensor is uint8 with exactly `bytes` elements, else null
// (none, or another layout's: a plan edited by hand may carry another tactic's).
const uint8_t* matching_prepacked_bytes(const LayerSpec& spec, size_t bytes);

}  // namespace kiln::tactics
