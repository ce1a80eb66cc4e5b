// Broadcasting element-wise ops with two or more inputs: arithmetic (Add, Sub, Mul, Div, Mod,
// BitShift, PRelu), Pow, variadic Min/Max/Sum/Mean, comparisons and logic.
#include "kernels/ref/elementwise_binary.h"

#include "ops/elementwise_common.h"

namespace kiln::ops {
namespace {

using ir::AttrType;
using kernels::ref::BinaryOp;
using kernels::ref::CompareOp;
using kernels::ref::LogicOp;
using kernels::ref::VariadicOp;
using namespace elementwise;

// Output 0 of a two-input op: numpy broadcasting, or the pre-opset-7 rules.
Status infer_binary(InferContext& ctx, DType dtype) {
  if (uses_legacy_broadcast(ctx)) return infer_legacy_broadcast(ctx, dtype);
  return infer_broadcast(ctx, dtype);
}

// Input 1 as the kernels read it: reshaped under the pre-opset-7 rules where they apply.
Result<Tensor> operand_b(const RunContext& ctx, const Tensor& a, Tensor b) {
  if (!uses_legacy_broadcast(ctx)) return b;
  return legacy_operand_b(ctx, a, b);
}

// --- Add, Sub, Mul, Div, Mod, BitShift, PRelu
// -----------------------------------------------------

// The kernel op for a node, validating the attributes that select it.
Result<BinaryOp> arith_op(const NodeContext& ctx, DType dtype) {
  const std::string_view t = ctx.node().op_type;
  if (t == "Add") return BinaryOp::kAdd;
  if (t == "Sub") return BinaryOp::kSub;
  if (t == "Mul") return BinaryOp::kMul;
  if (t == "Div") return BinaryOp::kDiv;
  if (t == "PRelu") return BinaryOp::kPRelu;
  if (t == "Mod") {
    const int64_t fmod = ctx.attrs().get_int("fmod", 0);
    if (fmod != 0 && fmod != 1) return ctx.error("attribute fmod is {}; expected 0 or 1", fmod);
    if (fmod == 0 && dtype_is_float(dtype)) {
      return ctx.error("attribute fmod must be 1 for floating-point inputs ({})",
                       dtype_name(dtype));
    }
    return fmod == 1 ? BinaryOp::kFmod : BinaryOp::kMod;
  }
  const std::string direction = ctx.attrs().get_string("direction", "");
  if (direction == "LEFT") return BinaryOp::kBitShiftLeft;
  if (direction == "RIGHT") return BinaryOp::kBitShiftRight;
  return ctx.error("attribute direction is '{}'; expected 'LEFT' or 'RIGHT'", direction);
}

// PRelu's slope broadcasts to X without changing X's shape (unidirectional broadcasting).
Status check_unidirectional(const InferContext& ctx) {
  const ir::TensorDesc& x = ctx.input(0);
  const ir::TensorDesc& slope = ctx.input(1);
  if (!x.has_rank() || !slope.has_rank()) return Status::ok();
  if (slope.rank() > x.rank()) {
    return ctx.error("slope {} has a higher rank than X {}", slope.to_string(), x.to_string());
  }
  for (int j = 0; j < slope.rank(); ++j) {
    const ir::Dim& s = slope.dim(j);
    const ir::Dim& d = x.dim(x.rank() - slope.rank() + j);
    if (s.is_known() && s.value != 1 && d.is_known() && d.value != s.value) {
      return ctx.error("slope {} does not broadcast to X {}", slope.to_string(), x.to_string());
    }
  }
  return Status::ok();
}

Status infer_arith(InferContext& ctx) {
  const bool shift = ctx.node().op_type == "BitShift";
  const bool prelu = ctx.node().op_type == "PRelu";
  std::span<const DType> allowed = shift ? std::span<const DType>(kUnsignedTypes) : kNumericTypes;
  if (prelu && ctx.since_version() < 9) allowed = kFloatTypes;
  KILN_RETURN_IF_ERROR(check_input_dtype(ctx, 0, allowed, prelu ? "X" : "A"));
  KILN_RETURN_IF_ERROR(check_input_dtype(ctx, 1, allowed, prelu ? "slope" : "B"));
  KILN_RETURN_IF_ERROR(check_same_dtype(ctx));
  KILN_RETURN_IF_ERROR(arith_op(ctx, ctx.input(0).dtype).status());
  if (!prelu || uses_legacy_broadcast(ctx)) return infer_binary(ctx, ctx.input(0).dtype);
  KILN_RETURN_IF_ERROR(check_unidirectional(ctx));
  KILN_RETURN_IF_ERROR(infer_broadcast(ctx, ctx.input(0).dtype));  // reports incompatible dims
  ctx.set_output(0, ctx.input(0));
  return Status::ok();
}

Status run_arith(RunContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const BinaryOp op, arith_op(ctx, ctx.input(0).dtype()));
  KILN_ASSIGN_OR_RETURN(const Tensor a, widen(ctx.input(0)));
  KILN_ASSIGN_OR_RETURN(Tensor wide_b, widen(ctx.input(1)));
  KILN_ASSIGN_OR_RETURN(const Tensor b, operand_b(ctx, a, std::move(wide_b)));
  Tensor y(a.dtype(), output_dims(ctx, 0));
  const bool ok = dispatch_kernel_type(a.dtype(), [&]<typename T>() {
    kernels::ref::binary<T>(op, a.data<T>(), a.dims(), b.data<T>(), b.dims(), y.data<T>(),
                            y.dims());
  });
  if (!ok) return no_kernel(ctx, a.dtype());
  return set_result(ctx, 0, y);
}

// --- Pow
// ------------------------------------------------------------------------------------------

Status infer_pow(InferContext& ctx) {
  const bool mixed = ctx.since_version() >= 12;
  KILN_RETURN_IF_ERROR(check_input_dtype(ctx, 0, float_or_numeric(mixed), "X"));
  KILN_RETURN_IF_ERROR(check_input_dtype(ctx, 1, float_or_numeric(mixed), "Y"));
  if (!mixed) KILN_RETURN_IF_ERROR(check_same_dtype(ctx));
  return infer_binary(ctx, ctx.input(0).dtype);
}

Status run_pow(RunContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const Tensor base, widen(ctx.input(0)));
  const bool int_exponent =
      dtype_is_integer(base.dtype()) && dtype_is_integer(ctx.input(1).dtype());
  KILN_ASSIGN_OR_RETURN(Tensor wide_e,
                        cast_tensor(ctx.input(1), int_exponent ? DType::kI64 : DType::kF64));
  KILN_ASSIGN_OR_RETURN(const Tensor e, operand_b(ctx, base, std::move(wide_e)));
  Tensor y(base.dtype(), output_dims(ctx, 0));
  const bool ok = dispatch_kernel_type(base.dtype(), [&]<typename T>() {
    if (int_exponent) {
      kernels::ref::pow_int_exponent<T>(base.data<T>(), base.dims(), e.data<int64_t>(), e.dims(),
                                        y.data<T>(), y.dims());
    } else {
      kernels::ref::pow_float_exponent<T>(base.data<T>(), base.dims(), e.data<double>(), e.dims(),
                                          y.data<T>(), y.dims());
    }
  });
  if (!ok) return no_kernel(ctx, base.dtype());
  return set_result(ctx, 0, y);
}

// --- Min, Max, Sum, Mean
// --------------------------------------------------------------------------

VariadicOp variadic_op(std::string_view op_type) {
  if (op_type == "Min") return VariadicOp::kMin;
  if (op_type == "Max") return VariadicOp::kMax;
  if (op_type == "Sum") return VariadicOp::kSum;
  return VariadicOp::kMean;
}

Status infer_variadic(InferContext& ctx) {
  const VariadicOp op = variadic_op(ctx.node().op_type);
  const bool ints = (op == VariadicOp::kMin || op == VariadicOp::kMax) && ctx.since_version() >= 12;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const std::string what = fmt::format("data_{}", i);
    KILN_RETURN_IF_ERROR(check_input_dtype(ctx, i, float_or_numeric(ints), what));
  }
  KILN_RETURN_IF_ERROR(check_same_dtype(ctx));
  return infer_broadcast(ctx, ctx.input(0).dtype);
}

Status run_variadic(RunContext& ctx) {
  const VariadicOp op = variadic_op(ctx.node().op_type);
  std::vector<Tensor> inputs;
  std::vector<Dims> dims;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    KILN_ASSIGN_OR_RETURN(Tensor t, widen(ctx.input(i)));
    dims.push_back(t.dims());
    inputs.push_back(std::move(t));
  }
  const DType dtype = inputs[0].dtype();
  Tensor y(dtype, output_dims(ctx, 0));
  const bool ok = dispatch_kernel_type(dtype, [&]<typename T>() {
    std::vector<const T*> ptrs;
    for (const Tensor& t : inputs) ptrs.push_back(t.data<T>());
    kernels::ref::variadic<T>(op, ptrs, dims, y.data<T>(), y.dims());
  });
  if (!ok) return no_kernel(ctx, dtype);
  return set_result(ctx, 0, y);
}

// --- comparisons and logic
// ------------------------------------------------------------------------

inline constexpr DType kEqualTypes[] = {DType::kF32, DType::kF16, DType::kF64, DType::kI8,
                                        DType::kI16, DType::kI32, DType::kI64, DType::kU8,
                                        DType::kU16, DType::kU32, DType::kU64, DType::kBool};

CompareOp compare_op(std::string_view op_type) {
  if (op_type == "Equal") return CompareOp::kEqual;
  if (op_type == "Less") return CompareOp::kLess;
  if (op_type == "Greater") return CompareOp::kGreater;
  if (op_type == "LessOrEqual") return CompareOp::kLessOrEqual;
  return CompareOp::kGreaterOrEqual;
}

Status infer_compare(InferContext& ctx) {
  const std::span<const DType> allowed =
      ctx.node().op_type == "Equal" ? std::span<const DType>(kEqualTypes) : kNumericTypes;
  KILN_RETURN_IF_ERROR(check_input_dtype(ctx, 0, allowed, "A"));
  KILN_RETURN_IF_ERROR(check_input_dtype(ctx, 1, allowed, "B"));
  KILN_RETURN_IF_ERROR(check_same_dtype(ctx));
  return infer_binary(ctx, DType::kBool);
}

Status run_compare(RunContext& ctx) {
  const CompareOp op = compare_op(ctx.node().op_type);
  KILN_ASSIGN_OR_RETURN(const Tensor a, widen(ctx.input(0)));  // float16 -> float32 is exact
  KILN_ASSIGN_OR_RETURN(Tensor wide_b, widen(ctx.input(1)));
  KILN_ASSIGN_OR_RETURN(const Tensor b, operand_b(ctx, a, std::move(wide_b)));
  Tensor& y = ctx.allocate_output(0);
  const auto run = [&]<typename T>() {
    kernels::ref::compare<T>(op, a.data<T>(), a.dims(), b.data<T>(), b.dims(), y.data<bool>(),
                             y.dims());
  };
  if (a.dtype() == DType::kBool) {
    run.template operator()<bool>();
  } else if (!dispatch_kernel_type(a.dtype(), run)) {
    return no_kernel(ctx, a.dtype());
  }
  return Status::ok();
}

Status infer_logic(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_dtype(ctx, 0, kBoolType, "A"));
  KILN_RETURN_IF_ERROR(check_input_dtype(ctx, 1, kBoolType, "B"));
  return infer_binary(ctx, DType::kBool);
}

Status run_logic(RunContext& ctx) {
  const std::string_view t = ctx.node().op_type;
  const LogicOp op = t == "And" ? LogicOp::kAnd : t == "Or" ? LogicOp::kOr : LogicOp::kXor;
  const Tensor& a = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(const Tensor b, operand_b(ctx, a, ctx.input(1)));
  Tensor& y = ctx.allocate_output(0);
  kernels::ref::logic(op, a.data<bool>(), a.dims(), b.data<bool>(), b.dims(), y.data<bool>(),
                      y.dims());
  return Status::ok();
}

OpDef two_inputs(std::string_view op_type, std::vector<int> versions, InferFn infer, RunFn run,
                 std::vector<AttrSpec> attrs = {}) {
  return {.op_type = op_type,
          .since_versions = std::move(versions),
          .min_inputs = 2,
          .max_inputs = 2,
          .attrs = std::move(attrs),
          .infer = infer,
          .run = run};
}

}  // namespace

void register_elementwise_binary_ops(OpRegistry& r) {
  // Versions 1 and 6 broadcast only with attribute broadcast=1 (see elementwise_legacy.cc);
  // consumed_inputs (version 1) was an optimisation hint without effect on the result.
  const std::vector<AttrSpec> legacy = {{"broadcast", AttrType::kInt}, {"axis", AttrType::kInt}};
  std::vector<AttrSpec> legacy_v1 = legacy;
  legacy_v1.push_back({"consumed_inputs", AttrType::kInts});
  for (std::string_view t : {"Add", "Sub", "Mul", "Div"}) {
    r.add(two_inputs(t, {1, 6, 7, 13, 14}, infer_arith, run_arith, legacy_v1));
  }
  r.add(two_inputs("Mod", {10, 13}, infer_arith, run_arith, {{"fmod", AttrType::kInt}}));
  r.add(two_inputs("BitShift", {11}, infer_arith, run_arith, {{"direction", AttrType::kString}}));
  r.add(two_inputs("PRelu", {1, 6, 7, 9, 16}, infer_arith, run_arith,
                   {{"consumed_inputs", AttrType::kInts}}));
  r.add(two_inputs("Pow", {1, 7, 12, 13, 15}, infer_pow, run_pow, legacy));
  for (std::string_view t : {"Min", "Max"}) {
    r.add({.op_type = t,
           .since_versions = {1, 6, 8, 12, 13},
           .min_inputs = 1,
           .max_inputs = kVariadic,
           .attrs = {{"consumed_inputs", AttrType::kInts}},
           .infer = infer_variadic,
           .run = run_variadic});
  }
  for (std::string_view t : {"Sum", "Mean"}) {
    r.add({.op_type = t,
           .since_versions = {1, 6, 8, 13},
           .min_inputs = 1,
           .max_inputs = kVariadic,
           .attrs = {{"consumed_inputs", AttrType::kInts}},
           .infer = infer_variadic,
           .run = run_variadic});
  }
  r.add(two_inputs("Equal", {1, 7, 11, 13, 19}, infer_compare, run_compare, legacy));
  r.add(two_inputs("Less", {1, 7, 9, 13}, infer_compare, run_compare, legacy));
  r.add(two_inputs("Greater", {1, 7, 9, 13}, infer_compare, run_compare, legacy));
  r.add(two_inputs("LessOrEqual", {12, 16}, infer_compare, run_compare));
  r.add(two_inputs("GreaterOrEqual", {12, 16}, infer_compare, run_compare));
  for (std::string_view t : {"And", "Or", "Xor"}) {
    r.add(two_inputs(t, {1, 7}, infer_logic, run_logic, legacy));
  }
}

}  // namespace kiln::ops
