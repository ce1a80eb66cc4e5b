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

// True when every input of this rank is normalised along contiguous rows (inner == 1): the
// opset-11 coercion always, opset 13 when the axis is the last.
bool softmax_rows_are_contiguous(const ir::Node& node, int since_version, int64_t rank);

}  // namespace kiln::tactics
