#include "ops/families.h"

namespace kiln::ops {

void register_shape_ops(OpRegistry& r) {}

}  // namespace kiln::ops
