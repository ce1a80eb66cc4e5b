#pragma once
// Reference kernels for ScatterND and ScatterElements. Both start from a copy of the data in `out`
// and combine updates into it with a reduction. Indices are validated and normalised by the caller.

#include <cstdint>
#include <span>

#include "base/dtype.h"
#include "base/tensor.h"

namespace kiln::kernels::ref {

enum class ScatterReduction { kNone, kAdd, kMul, kMax, kMin };

// ScatterElements: out[p with p[axis] = indices[q]] (op)= updates[q] for every q over idx_dims.
// `out` holds a copy of the data (out_dims); updates has idx_dims. False when `dtype` has no C++
// type.
bool scatter_elements(DType dtype, void* out, const Dims& out_dims,
                      std::span<const int64_t> indices, const Dims& idx_dims, const void* updates,
                      int64_t axis, ScatterReduction reduction);

// ScatterND: indices has idx_dims [..., m]; each m-tuple addresses a slice out[tuple, ...] of the
// trailing out dims, combined with the matching slice of updates. Applied in index order, so with
// kNone the last duplicate wins.
bool scatter_nd(DType dtype, void* out, const Dims& out_dims, std::span<const int64_t> indices,
                const Dims& idx_dims, const void* updates, ScatterReduction reduction);

}  // namespace kiln::kernels::ref
