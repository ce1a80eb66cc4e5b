#pragma once
// Reference kernels for data movement (Transpose, Slice, Expand, Tile, Concat, Pad, Gather*,
// Trilu).
//
// Movement does not look at values, so these kernels are dtype-agnostic: they copy elements of
// `elem_size` bytes. Every index they receive has been validated and normalised by the caller (the
// op layer reports bad indices with the node's name); the kernels only assert.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "base/tensor.h"

namespace kiln::kernels::ref {

// Row-major strides (in elements) of a buffer with these dims.
std::vector<int64_t> row_major_strides(const Dims& dims);

// A strided view of a row-major buffer: element (i_0, ..., i_n-1) lives at
// offset + sum_k i_k * strides[k]. Strides may be 0 (broadcast) or negative (reversed slices).
struct StridedView {
  int64_t offset = 0;
  Dims dims;
  std::vector<int64_t> strides;
};

// Copies the view's elements, in row-major order of view.dims, to `out`.
void strided_copy(const void* in, size_t elem_size, const StridedView& view, void* out);

// out = in with axes permuted: out.dims[k] = in_dims[perm[k]].
void transpose(const void* in, size_t elem_size, const Dims& in_dims, std::span<const int64_t> perm,
               void* out);

// out[i] = in[starts + i * steps] per axis; starts/steps have one entry per input axis and every
// addressed element is inside the input.
void slice(const void* in, size_t elem_size, const Dims& in_dims, std::span<const int64_t> starts,
           std::span<const int64_t> steps, const Dims& out_dims, void* out);

// numpy broadcast of `in` to `out_dims` (in_dims right-aligned; each in dim is 1 or equal).
void broadcast_to(const void* in, size_t elem_size, const Dims& in_dims, const Dims& out_dims,
                  void* out);

// out.dims[k] = in_dims[k] * repeats[k]; out[i] = in[i mod in_dims] per axis.
void tile(const void* in, size_t elem_size, const Dims& in_dims, std::span<const int64_t> repeats,
          void* out);

// Concatenates inputs of equal rank along `axis` (all other dims equal).
void concat(std::span<const void* const> ins, std::span<const Dims> in_dims, size_t elem_size,
            int64_t axis, void* out);

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

struct PadParams {
  PadMode mode = PadMode::kConstant;
  Dims begin;  // per axis; negative values crop
  Dims end;
  const void* constant = nullptr;  // one element of elem_size bytes (kConstant)
};

// ONNX Pad: crops by the negative pads first, then pads the cropped tensor by the positive ones.
// Reflect and wrap reflect/wrap repeatedly when a pad exceeds the (cropped) dim, like numpy.pad;
// the caller guarantees a non-empty cropped dim on every axis padded in reflect/edge/wrap mode.
void pad(const void* in, size_t elem_size, const Dims& in_dims, const PadParams& p,
         const Dims& out_dims, void* out);

// Gather along one axis, with the input viewed as [outer, axis_dim, inner]:
// out[o, j, i] = in[o, indices[j], i]. Indices are in [0, axis_dim).
void gather(const void* in, size_t elem_size, int64_t outer, int64_t axis_dim, int64_t inner,
            std::span<const int64_t> indices, void* out);

// GatherElements: out[p] = in[p with p[axis] replaced by indices[p]]; out has idx_dims.
void gather_elements(const void* in, size_t elem_size, const Dims& in_dims,
                     std::span<const int64_t> indices, const Dims& idx_dims, int64_t axis,
                     void* out);

// GatherND. `indices` has idx_dims = [batch..., rest..., m] (batch_dims leading batch axes shared
// with the data), every index tuple normalised to [0, data dim).
void gather_nd(const void* in, size_t elem_size, const Dims& in_dims,
               std::span<const int64_t> indices, const Dims& idx_dims, int64_t batch_dims,
               void* out);

// Trilu on the last two axes: keeps elements with col - row >= k (upper) or <= k (lower), zeroes
// the rest (an all-zero bit pattern is zero in every dtype).
void trilu(const void* in, size_t elem_size, const Dims& dims, int64_t k, bool upper, void* out);

}  // namespace kiln::kernels::ref
