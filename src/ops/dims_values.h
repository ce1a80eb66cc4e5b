#pragma once
// Shape arithmetic on dims ("data propagation" in ONNX's shape inference). PyTorch exports every
// view of a dynamic-batch tensor as Shape -> Gather -> Unsqueeze -> Concat -> Reshape; without
// this, the Reshape's shape input is an unknown value and its output loses every dim ("?"). Here a
// small integer tensor computed from shapes is tracked element by element (ir::SymInt: a number, a
// symbol's value or unknown), so [batch, 192, -1] reaches the Reshape and its output is [batch,
// 196, 192]: later passes can then prove that two tensors have the same shape.
//
// Only element movement is tracked (Shape, Gather, Slice, Concat, Unsqueeze, Squeeze, Reshape,
// Flatten, Identity, Cast to an integer type) plus Equal and Where, which PyTorch's expand(-1)
// exports, and Add, Sub, Mul, Div on numbers (a symbol survives + 0 and * 1 only).

#include <optional>

#include "ir/tensor_desc.h"
#include "ops/op_def.h"

namespace kiln::ops {

// Output 0's elements when the node is one of the ops above, has passed its shape function
// (`ctx.outputs()` is set), and its output is an int32/int64/bool tensor of rank <= 1 and at most
// kMaxTracedInts elements; nullopt otherwise (also when an input is out of range: the op's run-time
// check reports that).
std::optional<ir::SymInts> propagate_dims_value(const InferContext& ctx);

}  // namespace kiln::ops
