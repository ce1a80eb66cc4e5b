#pragma once
// Data movement, dtype-agnostic (elements of 1, 2, 4 or 8 bytes, or any size copied bytewise):
// strided copies (Transpose, Slice, broadcasting) planned once per shape, and Concat.

#include <cstddef>
#include <cstdint>
#include <span>

namespace kiln::kernels::cpu {

inline constexpr int kMaxCopyRank = 8;

// out (row-major over dims) [i0, ..., ik] = in[offset + sum_j i_j * strides[j]], in elements.
// Strides may be 0 (broadcast) or negative (reversed slices).
struct CopyPlan {
  int rank = 0;
  int64_t offset = 0;
  int64_t dims[kMaxCopyRank] = {};
  int64_t strides[kMaxCopyRank] = {};
  // Set when two axes swap their roles (a transpose of the two innermost contiguous runs): the
  // copy walks tiles of `tile_axis` x innermost so that reads and writes both stay in cache.
  int tile_axis = -1;
};

// Builds the plan for a view with `dims` and `strides` (any rank): unit axes dropped, adjacent
// axes merged where the strides allow. False when more than kMaxCopyRank axes remain.
bool make_copy_plan(std::span<const int64_t> dims, std::span<const int64_t> strides, int64_t offset,
                    CopyPlan& plan);

void strided_copy(const CopyPlan& plan, size_t elem_size, const void* in, void* out);

// For splitting a copy over threads: the output elements one index of the plan's outermost axis
// covers, and the plan of the indices [begin, end) of that axis alone (its output starts
// begin * outer_row_elements(plan) elements into the whole copy's).
int64_t outer_row_elements(const CopyPlan& plan);
CopyPlan outer_slice(const CopyPlan& plan, int64_t begin, int64_t end);

// Concat and Split along an axis of [outer, axis, inner] views: part i has `chunks[i]` =
// axis_i * inner elements per outer index, and the whole (Concat's output, Split's input) is,
// per outer index, the parts' chunks one after the other. Each copies the whole's elements
// [begin, end), so that threads can take even shares of a copy whatever its parts' sizes
// (YOLO's Split of 32 channels into 16 + 16, at batch 1, is one chunk per part).
void concat_range(std::span<const void* const> ins, std::span<const int64_t> chunks,
                  size_t elem_size, void* out, int64_t begin, int64_t end);
void split_range(const void* in, std::span<void* const> outs, std::span<const int64_t> chunks,
                 size_t elem_size, int64_t begin, int64_t end);

}  // namespace kiln::kernels::cpu
