#include "ops/families.h"

namespace kiln::ops {

void register_nn_ops(OpRegistry& r) {}

}  // namespace kiln::ops
