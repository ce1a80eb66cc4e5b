#pragma once
// Reference ReverseSequence and Unique: data movement that depends on the values of an input.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln::kernels::ref {

// ReverseSequence over a row-major tensor of `dims` (elements of elem_size bytes): for batch entry
// b (the index along batch_axis) the first seq_lens[b] entries along time_axis are reversed, the
// rest copied. Every seq_lens[b] must lie in [0, dims[time_axis]] (the caller checks).
struct ReverseSequenceParams {
  std::vector<int64_t> dims;
  int64_t batch_axis = 1;
  int64_t time_axis = 0;
};
void reverse_sequence(const ReverseSequenceParams& p, size_t elem_size, const void* x,
                      const int64_t* seq_lens, void* y);

// Unique over x viewed as [outer, items, inner]: item j is the slice x[:, j, :] (a single element
// when outer = inner = 1), compared lexicographically in row-major order. Floating values compare
// numerically (-0 equals 0), NaNs equal each other and sort after every number.
struct UniqueResult {
  std::vector<int64_t> first;    // per unique item, in output order: its first occurrence
  std::vector<int64_t> inverse;  // per item: the position of its unique item in the output
  std::vector<int64_t> counts;   // per unique item: its number of occurrences
};
// sorted: unique items in ascending order; otherwise in order of first occurrence. T is any kiln
// element type (Half included).
template <typename T>
UniqueResult unique(const T* x, int64_t outer, int64_t items, int64_t inner, bool sorted);

}  // namespace kiln::kernels::ref
