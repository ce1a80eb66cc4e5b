// The shape family: data movement and shape ops. Each part lives in its own file (ops/shape_*.cc).
#include "ops/families.h"
#include "ops/shape_common.h"

namespace kiln::ops {

void register_shape_ops(OpRegistry& r) {
  shape_detail::register_reshape_ops(r);
  shape_detail::register_layout_ops(r);
  shape_detail::register_slice_ops(r);
  shape_detail::register_pad_ops(r);
  shape_detail::register_index_ops(r);
  shape_detail::register_scatter_ops(r);
  shape_detail::register_constant_ops(r);
  shape_detail::register_sequence_ops(r);
}

}  // namespace kiln::ops
