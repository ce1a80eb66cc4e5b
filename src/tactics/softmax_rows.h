#pragma once
// Which elements Softmax normalises together, under the node's opset (before 13: the rows of the
// input coerced to 2-D at `axis`; from 13: along `axis`), shared by the builtin and x86 tactics.

#include <span>

#include "base/status.h"
#include "ir/graph.h"
#include "kernels/cpu/softmax.h"

namespace kiln::tactics {

// The input (dims) as outer x n x inner, n the normalised extent.
Result<kernels::cpu::SoftmaxShape> softmax_shape(const ir::Node& node, int since_version,
                                                 std::span<const int64_t> dims);

}  // namespace kiln::tactics
