// The loss family: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opsets 12 and 13, which
// differ only in the types ONNX lists). Both take an [N, C, d1, ..., dk] input, [N, d1, ..., dk]
// integer targets and optional per-class weights [C]; `reduction` is none, sum or mean (default).
#include "kernels/ref/loss.h"

#include "ops/families.h"
#include "ops/math_common.h"

namespace kiln::ops {
namespace {

namespace ref = kernels::ref;
using ir::AttrType;

bool is_sce(const NodeContext& ctx) { return ctx.node().op_type == "SoftmaxCrossEntropyLoss"; }

// ONNX's names for the three inputs of each op, for messages.
std::string_view input_name(const NodeContext& ctx, size_t i) {
  static constexpr std::string_view kNll[] = {"input", "target", "weight"};
  static constexpr std::string_view kSce[] = {"scores", "labels", "weights"};
  return is_sce(ctx) ? kSce[i] : kNll[i];
}

Result<ref::LossReduction> reduction_attr(const NodeContext& ctx) {
  const std::string r = ctx.attrs().get_string("reduction", "mean");
  if (r == "none") return ref::LossReduction::kNone;
  if (r == "sum") return ref::LossReduction::kSum;
  if (r == "mean") return ref::LossReduction::kMean;
  return ctx.error("attribute reduction is '{}'; expected 'none', 'sum' or 'mean'", r);
}

// Two dims that must be equal: an error when both are known and differ, else the better known one.
Result<ir::Dim> merge_dim(const NodeContext& ctx, const ir::Dim& a, const ir::Dim& b,
                          std::string_view what) {
  if (a.is_known() && b.is_known() && a.value != b.value) {
    return ctx.error("{}: {} != {}", what, a.value, b.value);
  }
  return a.is_known() || !a.symbol.empty() ? a : b;
}

Status check_dtypes_of_loss(const InferContext& ctx) {
  KILN_RETURN_IF_ERROR(require_input(ctx, 0, input_name(ctx, 0)));
  KILN_RETURN_IF_ERROR(require_input(ctx, 1, input_name(ctx, 1)));
  const size_t same[] = {2};
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kFloatTypes, same));
  const DType t = ctx.input(1).dtype;
  if (t != DType::kI32 && t != DType::kI64) {
    return ctx.error("{} must be int32 or int64, got {}", input_name(ctx, 1), dtype_name(t));
  }
  return Status::ok();
}

// The shape of the unreduced loss, [N, d1, ..., dk], from the input and the targets; nullopt when
// neither rank is known. Checks that the two agree.
Result<std::optional<ir::Shape>> per_element_shape(const InferContext& ctx) {
  const ir::TensorDesc& x = ctx.input(0);
  const ir::TensorDesc& t = ctx.input(1);
  if (x.has_rank() && x.rank() < 2) {
    return ctx.error("{} must have rank >= 2 ([N, C, ...]), got {}", input_name(ctx, 0),
                     x.to_string());
  }
  if (!x.has_rank()) return std::optional<ir::Shape>(t.shape);
  ir::Shape shape;
  for (int i = 0; i < x.rank(); ++i) {
    if (i != 1) shape.push_back(x.dim(i));
  }
  if (!t.has_rank()) return std::optional<ir::Shape>(std::move(shape));
  if (t.rank() != x.rank() - 1) {
    return ctx.error("{} {} must have rank {} (the rank of {} {} minus one)", input_name(ctx, 1),
                     t.to_string(), x.rank() - 1, input_name(ctx, 0), x.to_string());
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    const std::string what =
        fmt::format("dim {} of {} {} does not match {} {}", i, input_name(ctx, 1), t.to_string(),
                    input_name(ctx, 0), x.to_string());
    KILN_ASSIGN_OR_RETURN(shape[i], merge_dim(ctx, shape[i], t.dim(static_cast<int>(i)), what));
  }
  return std::optional<ir::Shape>(std::move(shape));
}

Status check_weight(const InferContext& ctx) {
  if (!ctx.has_input(2)) return Status::ok();
  const ir::TensorDesc& w = ctx.input(2);
  const ir::TensorDesc& x = ctx.input(0);
  if (!w.has_rank()) return Status::ok();
  if (w.rank() != 1) {
    return ctx.error("{} must be 1-D [C], got {}", input_name(ctx, 2), w.to_string());
  }
  if (x.has_rank()) {
    const std::string what =
        fmt::format("{} {} must have one element per class of {} {}", input_name(ctx, 2),
                    w.to_string(), input_name(ctx, 0), x.to_string());
    KILN_RETURN_IF_ERROR(merge_dim(ctx, w.dim(0), x.dim(1), what).status());
  }
  return Status::ok();
}

Status infer_loss(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_dtypes_of_loss(ctx));
  KILN_ASSIGN_OR_RETURN(const ref::LossReduction reduction, reduction_attr(ctx));
  KILN_ASSIGN_OR_RETURN(std::optional<ir::Shape> shape, per_element_shape(ctx));
  KILN_RETURN_IF_ERROR(check_weight(ctx));
  const DType dtype = ctx.input(0).dtype;
  if (reduction != ref::LossReduction::kNone) shape = ir::Shape{};
  ctx.set_output(0, ir::TensorDesc{dtype, std::move(shape)});
  if (ctx.has_output(1)) ctx.set_output(1, ctx.input(0));  // SoftmaxCrossEntropyLoss's log_prob
  return Status::ok();
}

// Every target is the ignore index or a class in [0, C).
Status check_targets(const RunContext& ctx, const ref::LossParams& p) {
  const std::vector<int64_t> targets = ctx.input(1).to_int64_vector();
  for (size_t i = 0; i < targets.size(); ++i) {
    if (p.has_ignore_index && targets[i] == p.ignore_index) continue;
    if (targets[i] < 0 || targets[i] >= p.c) {
      return ctx.error(
          "{} value {} at flat index {} is not a class in [0, {}){}", input_name(ctx, 1),
          targets[i], i, p.c,
          p.has_ignore_index ? fmt::format(" nor ignore_index {}", p.ignore_index) : std::string());
    }
  }
  return Status::ok();
}

Status run_loss(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& target = ctx.input(1);
  const Tensor* weight = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  ref::LossParams p;
  KILN_ASSIGN_OR_RETURN(p.reduction, reduction_attr(ctx));
  p.n = x.dim(0);
  p.c = x.dim(1);
  for (int i = 2; i < x.rank(); ++i) p.d *= x.dim(i);
  p.has_ignore_index = ctx.attrs().has("ignore_index");
  p.ignore_index = ctx.attrs().get_int("ignore_index", 0);
  KILN_RETURN_IF_ERROR(check_targets(ctx, p));

  Tensor& out = ctx.allocate_output(0);
  // SoftmaxCrossEntropyLoss computes log_prob whether or not the model asks for it.
  Tensor scratch;
  Tensor* log_prob = nullptr;
  if (is_sce(ctx)) {
    log_prob =
        ctx.has_output(1) ? &ctx.allocate_output(1) : &(scratch = Tensor(x.dtype(), x.dims()));
  }
  const bool ok = dispatch_float(x.dtype(), [&]<typename T>() {
    const T* w = weight != nullptr ? weight->data<T>() : nullptr;
    const auto run = [&]<typename I>() {
      if (log_prob != nullptr) {
        ref::softmax_cross_entropy_loss<T, I>(p, x.data<T>(), target.data<I>(), w, out.data<T>(),
                                              log_prob->data<T>());
      } else {
        ref::nll_loss<T, I>(p, x.data<T>(), target.data<I>(), w, out.data<T>());
      }
    };
    if (target.dtype() == DType::kI32) {
      run.template operator()<int32_t>();
    } else {
      run.template operator()<int64_t>();
    }
  });
  if (!ok) return ctx.unsupported("dtype {} is not supported", dtype_name(x.dtype()));
  return Status::ok();
}

}  // namespace

void register_loss_ops(OpRegistry& r) {
  const std::vector<AttrSpec> attrs = {{"ignore_index", AttrType::kInt},
                                       {"reduction", AttrType::kString}};
  r.add({.op_type = "NegativeLogLikelihoodLoss",
         .since_versions = {12, 13},
         .min_inputs = 2,
         .max_inputs = 3,
         .attrs = attrs,
         .infer = infer_loss,
         .run = run_loss});
  r.add({.op_type = "SoftmaxCrossEntropyLoss",
         .since_versions = {12, 13},
         .min_inputs = 2,
         .max_inputs = 3,
         .min_outputs = 1,
         .max_outputs = 2,
         .attrs = attrs,
         .infer = infer_loss,
         .run = run_loss});
}

}  // namespace kiln::ops
