#include "kernels/ref/math_util.h"

#include <cassert>

namespace kiln::kernels::ref {

std::vector<int64_t> broadcast_offsets(const std::vector<int64_t>& in,
                                       const std::vector<int64_t>& out) {
  assert(in.size() <= out.size());
  const size_t rank = out.size();
  std::vector<int64_t> in_strides(rank, 0);
  int64_t stride = 1;
  for (size_t j = in.size(); j-- > 0;) {
    in_strides[rank - in.size() + j] = in[j] == 1 ? 0 : stride;
    stride *= in[j];
  }
  int64_t total = 1;
  for (int64_t d : out) total *= d;
  std::vector<int64_t> offsets(static_cast<size_t>(total));
  std::vector<int64_t> coord(rank, 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < total; ++i) {
    offsets[static_cast<size_t>(i)] = offset;
    // Odometer increment of the output coordinate, keeping the input offset in step.
    for (size_t k = rank; k-- > 0;) {
      if (++coord[k] < out[k]) {
        offset += in_strides[k];
        break;
      }
      offset -= in_strides[k] * (coord[k] - 1);
      coord[k] = 0;
    }
  }
  return offsets;
}

}  // namespace kiln::kernels::ref
