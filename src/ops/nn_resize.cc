#include "ops/nn_ops.h"

namespace kiln::ops {

void register_resize_ops(OpRegistry& r) {}

}  // namespace kiln::ops
