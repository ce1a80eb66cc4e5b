#include "ops/families.h"

namespace kiln::ops {

void register_elementwise_ops(OpRegistry& r) {}

}  // namespace kiln::ops
