#include "ops/families.h"

namespace kiln::ops {

void register_math_ops(OpRegistry& r) {}

}  // namespace kiln::ops
