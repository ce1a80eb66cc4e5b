#include "tactics/softmax_rows.h"

#include "ops/shape_util.h"

namespace kiln::tactics {
namespace {

int64_t product(std::span<const int64_t> d, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= d[i];
  return n;
}

bool flattens(int since_version) { return since_version < 13; }

int64_t default_axis(int since_version) { return flattens(since_version) ? 1 : -1; }

}  // namespace

Result<kernels::cpu::SoftmaxShape> softmax_shape(const ir::Node& node, int since_version,
                                                 std::span<const int64_t> dims) {
  const auto rank = static_cast<int64_t>(dims.size());
  const bool flat = flattens(since_version);
  int64_t axis = node.attrs.get_int("axis", default_axis(since_version));
  if (flat && (axis == rank || axis == -rank - 1)) {
    axis = axis < 0 ? 0 : rank;
  } else {
    KILN_ASSIGN_OR_RETURN(axis,
                          ops::normalize_axis(ops::NodeContext(node, since_version), axis, rank));
  }
  const auto a = static_cast<size_t>(axis), r = dims.size();
  kernels::cpu::SoftmaxShape s;
  s.outer = product(dims, 0, a);
  s.n = flat ? product(dims, a, r) : dims[a];
  s.inner = flat ? 1 : product(dims, a + 1, r);
  return s;
}

}  // namespace kiln::tactics
