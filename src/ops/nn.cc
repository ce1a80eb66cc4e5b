#include "ops/families.h"
#include "ops/nn_ops.h"

namespace kiln::ops {

void register_nn_ops(OpRegistry& r) {
  register_conv_ops(r);
  register_pool_ops(r);
  register_norm_ops(r);
  register_resize_ops(r);
  register_qconv_ops(r);
  register_unpool_mvn_ops(r);
  register_roi_align_ops(r);
}

}  // namespace kiln::ops
