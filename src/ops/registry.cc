// The one table of op families. Adding a family: one line here plus its file.
#include "ops/families.h"

namespace kiln::ops {

const OpRegistry& op_registry() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    register_elementwise_ops(r);
    register_shape_ops(r);
    register_nn_ops(r);
    register_math_ops(r);
    register_loss_ops(r);
    register_rnn_ops(r);
    register_sampling_ops(r);
    register_kiln_ops(r);
    register_kiln_attention_ops(r);
    register_kiln_patches_ops(r);
    register_kiln_quant_ops(r);
    register_kiln_layout_ops(r);
    return r;
  }();
  return registry;
}

}  // namespace kiln::ops
