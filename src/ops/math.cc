// The math op family: matrix products, Einsum, softmax, reductions, TopK, quantization and
// NonMaxSuppression. Each group lives in its own math_*.cc file.
#include "ops/families.h"
#include "ops/math_common.h"

namespace kiln::ops {

std::string shape_text(const ir::TensorDesc& d) {
  const std::string s = d.to_string();
  const size_t bracket = s.find('[');
  return bracket == std::string::npos ? s : s.substr(bracket);
}

Result<std::vector<int64_t>> int_values(const NodeContext& ctx, const Tensor& t,
                                        std::string_view what) {
  if (!dtype_is_integer(t.dtype())) {
    return ctx.error("{} must be an integer tensor, got {}", what, t.desc());
  }
  if (t.rank() > 1) return ctx.error("{} must be a scalar or 1-D tensor, got {}", what, t.desc());
  return t.to_int64_vector();
}

void register_math_ops(OpRegistry& r) {
  register_matmul_ops(r);
  register_einsum_ops(r);
  register_softmax_ops(r);
  register_reduce_ops(r);
  register_topk_ops(r);
  register_quant_ops(r);
  register_nms_ops(r);
  register_det_ops(r);
}

}  // namespace kiln::ops
