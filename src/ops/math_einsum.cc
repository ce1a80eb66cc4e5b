// Einsum (opset 12): numpy equation syntax with '...', implicit or explicit output.
#include <map>

#include "kernels/ref/einsum.h"
#include "ops/math_common.h"

namespace kiln::ops {
namespace {

namespace ref = kernels::ref;

Result<ref::EinsumEquation> parse(const NodeContext& ctx) {
  const std::string equation = ctx.attrs().get_string("equation", "");
  if (!ctx.attrs().has("equation")) return ctx.error("attribute equation is required");
  auto eq = ref::parse_einsum(equation, ctx.num_inputs());
  if (!eq.is_ok()) return ctx.error("{}", eq.status().message());
  return std::move(eq).value();
}

// Checks operand i's rank against its term; returns the number of dims its ellipsis covers.
Result<int64_t> ellipsis_rank(const NodeContext& ctx, const ref::EinsumTerm& t, int rank,
                              size_t i) {
  const auto letters = static_cast<int>(t.letters.size());
  if (rank < letters || (!t.has_ellipsis && rank != letters)) {
    return ctx.error("equation '{}': operand {} has rank {} but its term '{}{}' needs {}{}",
                     ctx.attrs().get_string("equation", ""), i, rank, t.letters,
                     t.has_ellipsis ? "..." : "", letters, t.has_ellipsis ? " or more" : "");
  }
  return rank - letters;
}

// Merges what operands say about one letter's size: known non-1 sizes win and must agree.
Status merge_letter(const NodeContext& ctx, std::map<char, ir::Dim>& dims, char c,
                    const ir::Dim& got) {
  auto [it, fresh] = dims.emplace(c, got);
  ir::Dim& cur = it->second;
  if (fresh || (got.is_known() && got.value == 1)) return Status::ok();
  if (cur.is_known() && cur.value == 1) {
    cur = got;
  } else if (cur.is_known() && got.is_known() && cur.value != got.value) {
    return ctx.error("equation '{}': label '{}' has sizes {} and {}",
                     ctx.attrs().get_string("equation", ""), c, cur.value, got.value);
  } else if (!cur.is_known() && (got.is_known() || cur.symbol != got.symbol)) {
    cur = got.is_known() ? got : ir::Dim::unknown();
  }
  return Status::ok();
}

Status infer_einsum(InferContext& ctx) {
  std::vector<size_t> same;
  for (size_t i = 1; i < ctx.num_inputs(); ++i) same.push_back(i);
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kNumericTypes, same));
  KILN_ASSIGN_OR_RETURN(const ref::EinsumEquation eq, parse(ctx));
  const DType dtype = ctx.input(0).dtype;
  std::map<char, ir::Dim> letters;
  std::vector<ir::Shape> ellipses;
  bool ellipsis_known = true;
  for (size_t i = 0; i < eq.inputs.size(); ++i) {
    const ref::EinsumTerm& t = eq.inputs[i];
    const ir::TensorDesc& d = ctx.input(i);
    if (!d.has_rank()) {
      ellipsis_known = ellipsis_known && !t.has_ellipsis;
      continue;
    }
    KILN_ASSIGN_OR_RETURN(const int64_t ell, ellipsis_rank(ctx, t, d.rank(), i));
    const auto ell_begin = static_cast<int64_t>(t.ellipsis_pos);
    for (size_t k = 0; k < t.letters.size(); ++k) {
      const int64_t dim = static_cast<int64_t>(k) +
                          (static_cast<int64_t>(k) >= ell_begin && t.has_ellipsis ? ell : 0);
      KILN_RETURN_IF_ERROR(merge_letter(ctx, letters, t.letters[k], d.dim(static_cast<int>(dim))));
    }
    if (t.has_ellipsis) {
      ellipses.emplace_back(d.shape->begin() + ell_begin, d.shape->begin() + ell_begin + ell);
    }
  }
  if (eq.output.has_ellipsis && !ellipsis_known) {
    ctx.set_output(0, ir::TensorDesc::unknown_shape(dtype));
    return Status::ok();
  }
  KILN_ASSIGN_OR_RETURN(const ir::Shape ellipsis, broadcast_shapes(ctx, ellipses));
  ir::Shape out;
  for (size_t k = 0; k <= eq.output.letters.size(); ++k) {
    if (eq.output.has_ellipsis && k == eq.output.ellipsis_pos) {
      out.insert(out.end(), ellipsis.begin(), ellipsis.end());
    }
    if (k < eq.output.letters.size()) {
      auto it = letters.find(eq.output.letters[k]);
      out.push_back(it == letters.end() ? ir::Dim::unknown() : it->second);
    }
  }
  ctx.set_output(0, ir::TensorDesc::of(dtype, std::move(out)));
  return Status::ok();
}

Status run_einsum(RunContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const ref::EinsumEquation eq, parse(ctx));
  std::vector<Dims> dims;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) dims.push_back(ctx.input(i).dims());
  auto plan = ref::plan_einsum(eq, dims, ctx.attrs().get_string("equation", ""));
  if (!plan.is_ok()) return ctx.error("{}", plan.status().message());
  Tensor& y = ctx.allocate_output(0);
  const DType dtype = ctx.input(0).dtype();
  if (!dispatch_numeric(dtype, [&]<typename T>() {
        std::vector<const T*> operands;
        for (size_t i = 0; i < ctx.num_inputs(); ++i) operands.push_back(ctx.input(i).data<T>());
        ref::einsum<T>(*plan, operands, y.data<T>());
      })) {
    return ctx.unsupported("dtype {} is not supported", dtype_name(dtype));
  }
  return Status::ok();
}

}  // namespace

void register_einsum_ops(OpRegistry& r) {
  r.add({.op_type = "Einsum",
         .since_versions = {12},
         .min_inputs = 1,
         .max_inputs = kVariadic,
         .attrs = {{"equation", ir::AttrType::kString}},
         .infer = infer_einsum,
         .run = run_einsum});
}

}  // namespace kiln::ops
