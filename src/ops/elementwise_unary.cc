// One-input element-wise ops: math functions, activations and Shrink (table-driven), IsNaN, IsInf,
// Not.
#include "kernels/ref/elementwise_unary.h"

#include <algorithm>
#include <array>

#include "ops/elementwise_common.h"

namespace kiln::ops {
namespace {

using ir::AttrType;
using kernels::ref::UnaryOp;
using kernels::ref::UnaryParams;
using namespace elementwise;

enum class Types {
  kFloat,          // float16, float32, float64 only
  kNumeric,        // every numeric type
  kSignedNumeric,  // floats and signed integers
  kFloatThenInts,  // floats; signed integers too from `int_since`
};

struct UnarySpec {
  std::string_view op_type;
  std::vector<int> versions;
  UnaryOp op;
  Types types = Types::kFloat;
  std::vector<AttrSpec> attrs;
  // The float attributes read into UnaryParams::alpha, beta and gamma, and their defaults.
  std::array<std::string_view, 3> param_names = {"alpha", "beta", "gamma"};
  std::array<float, 3> defaults = {0.0f, 0.0f, 0.0f};
  int int_since = 0;  // for Types::kFloatThenInts
};

UnarySpec spec(std::string_view op_type, std::vector<int> versions, UnaryOp op,
               Types types = Types::kFloat) {
  UnarySpec s;
  s.op_type = op_type;
  s.versions = std::move(versions);
  s.op = op;
  s.types = types;
  if (s.versions.front() == 6) {
    // Version 1 differed only by consumed_inputs, an optimisation hint without effect on the
    // result.
    s.versions.insert(s.versions.begin(), 1);
    s.attrs.push_back({"consumed_inputs", AttrType::kInts});
  }
  return s;
}

// The UnaryParams slot of a float attribute: alpha, beta and gamma by name; Shrink's lambd and bias
// are read into alpha and beta.
size_t param_slot(std::string_view name) {
  if (name == "alpha" || name == "lambd") return 0;
  if (name == "beta" || name == "bias") return 1;
  assert(name == "gamma" && "float attribute without a UnaryParams slot");
  return 2;
}

// An op with float attributes and their defaults.
UnarySpec activation(std::string_view op_type, std::vector<int> versions, UnaryOp op,
                     std::vector<std::pair<std::string_view, float>> params,
                     Types types = Types::kFloat) {
  UnarySpec s = spec(op_type, std::move(versions), op, types);
  for (const auto& [name, value] : params) {
    s.attrs.push_back({name, AttrType::kFloat});
    s.param_names[param_slot(name)] = name;
    s.defaults[param_slot(name)] = value;
  }
  return s;
}

const std::vector<UnarySpec>& unary_specs() {
  static const std::vector<UnarySpec> specs = [] {
    std::vector<UnarySpec> v = {
        spec("Relu", {6, 13, 14}, UnaryOp::kRelu, Types::kFloatThenInts),
        spec("Sigmoid", {6, 13}, UnaryOp::kSigmoid),
        spec("Tanh", {6, 13}, UnaryOp::kTanh),
        spec("Erf", {9, 13}, UnaryOp::kErf, Types::kNumeric),
        spec("Exp", {6, 13}, UnaryOp::kExp),
        spec("Log", {6, 13}, UnaryOp::kLog),
        spec("Neg", {6, 13}, UnaryOp::kNeg, Types::kSignedNumeric),
        spec("Abs", {6, 13}, UnaryOp::kAbs, Types::kNumeric),
        spec("Reciprocal", {6, 13}, UnaryOp::kReciprocal),
        spec("Sqrt", {6, 13}, UnaryOp::kSqrt),
        spec("Floor", {6, 13}, UnaryOp::kFloor),
        spec("Ceil", {6, 13}, UnaryOp::kCeil),
        spec("Round", {11}, UnaryOp::kRound),
        spec("Sign", {9, 13}, UnaryOp::kSign, Types::kNumeric),
        spec("Sin", {7}, UnaryOp::kSin),
        spec("Cos", {7}, UnaryOp::kCos),
        spec("Tan", {7}, UnaryOp::kTan),
        spec("Asin", {7}, UnaryOp::kAsin),
        spec("Acos", {7}, UnaryOp::kAcos),
        spec("Atan", {7}, UnaryOp::kAtan),
        spec("Sinh", {9}, UnaryOp::kSinh),
        spec("Cosh", {9}, UnaryOp::kCosh),
        spec("Asinh", {9}, UnaryOp::kAsinh),
        spec("Acosh", {9}, UnaryOp::kAcosh),
        spec("Atanh", {9}, UnaryOp::kAtanh),
        spec("Softplus", {1}, UnaryOp::kSoftplus),
        spec("Softsign", {1}, UnaryOp::kSoftsign),
        spec("Mish", {18}, UnaryOp::kMish),
        spec("HardSwish", {14}, UnaryOp::kHardSwish),
        activation("Elu", {6}, UnaryOp::kElu, {{"alpha", 1.0f}}),
        activation("Selu", {6}, UnaryOp::kSelu,
                   {{"alpha", 1.67326319217681884765625f}, {"gamma", 1.05070102214813232421875f}}),
        activation("Celu", {12}, UnaryOp::kCelu, {{"alpha", 1.0f}}),
        activation("ThresholdedRelu", {10}, UnaryOp::kThresholdedRelu, {{"alpha", 1.0f}}),
        activation("HardSigmoid", {6}, UnaryOp::kHardSigmoid, {{"alpha", 0.2f}, {"beta", 0.5f}}),
        activation("LeakyRelu", {6, 16}, UnaryOp::kLeakyRelu, {{"alpha", 0.01f}}),
        activation("Shrink", {9}, UnaryOp::kShrink, {{"lambd", 0.5f}, {"bias", 0.0f}},
                   Types::kNumeric),
    };
    v[0].int_since = 14;  // Relu accepts signed integers from opset 14
    UnarySpec gelu = spec("Gelu", {20}, UnaryOp::kGelu);
    gelu.attrs = {{"approximate", AttrType::kString}};
    v.push_back(std::move(gelu));
    return v;
  }();
  return specs;
}

const UnarySpec& find_spec(std::string_view op_type) {
  const auto& specs = unary_specs();
  const auto it = std::find_if(specs.begin(), specs.end(),
                               [&](const UnarySpec& s) { return s.op_type == op_type; });
  assert(it != specs.end() && "unary op dispatched without a spec");
  return *it;
}

// The kernel parameters for a node: attributes over the spec's defaults, validated.
Result<UnaryParams> unary_params(const NodeContext& ctx, const UnarySpec& spec) {
  UnaryParams p{spec.op, ctx.attrs().get_float(spec.param_names[0], spec.defaults[0]),
                ctx.attrs().get_float(spec.param_names[1], spec.defaults[1]),
                ctx.attrs().get_float(spec.param_names[2], spec.defaults[2])};
  if (spec.op == UnaryOp::kCelu && p.alpha == 0.0f) {
    return ctx.error("attribute alpha must not be 0 (Celu divides by it)");
  }
  if (spec.op == UnaryOp::kGelu) {
    const std::string approximate = ctx.attrs().get_string("approximate", "none");
    if (approximate == "tanh") {
      p.op = UnaryOp::kGeluTanh;
    } else if (approximate != "none") {
      return ctx.error("attribute approximate is '{}'; expected 'none' or 'tanh'", approximate);
    }
  }
  return p;
}

std::span<const DType> allowed_types(const UnarySpec& spec, int since_version) {
  switch (spec.types) {
    case Types::kNumeric:
      return kNumericTypes;
    case Types::kSignedNumeric:
      return kSignedNumericTypes;
    case Types::kFloatThenInts:
      return since_version >= spec.int_since ? std::span<const DType>(kSignedNumericTypes)
                                             : std::span<const DType>(kFloatTypes);
    case Types::kFloat:
      break;
  }
  return kFloatTypes;
}

Status infer_unary(InferContext& ctx) {
  const UnarySpec& spec = find_spec(ctx.node().op_type);
  KILN_RETURN_IF_ERROR(check_input_dtype(ctx, 0, allowed_types(spec, ctx.since_version()), "X"));
  KILN_RETURN_IF_ERROR(unary_params(ctx, spec).status());
  ctx.set_output(0, ctx.input(0));
  return Status::ok();
}

Status run_unary(RunContext& ctx) {
  const UnarySpec& spec = find_spec(ctx.node().op_type);
  KILN_ASSIGN_OR_RETURN(const UnaryParams p, unary_params(ctx, spec));
  KILN_ASSIGN_OR_RETURN(const Tensor x, widen(ctx.input(0)));
  Tensor y(x.dtype(), x.dims());
  const bool ok = dispatch_kernel_type(x.dtype(), [&]<typename T>() {
    kernels::ref::unary<T>(p, x.data<T>(), y.data<T>(), x.numel());
  });
  if (!ok) return no_kernel(ctx, x.dtype());
  return set_result(ctx, 0, y);
}

// --- IsNaN, IsInf, Not
// ----------------------------------------------------------------------------

Status infer_float_predicate(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_dtype(ctx, 0, kFloatTypes, "X"));
  ctx.set_output(0, ir::TensorDesc{DType::kBool, ctx.input(0).shape});
  return Status::ok();
}

Status run_float_predicate(RunContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const Tensor x, widen(ctx.input(0)));
  Tensor& y = ctx.allocate_output(0);
  const bool is_nan = ctx.node().op_type == "IsNaN";
  const bool positive = ctx.attrs().get_int("detect_positive", 1) != 0;
  const bool negative = ctx.attrs().get_int("detect_negative", 1) != 0;
  const auto run = [&]<typename T>() {
    if (is_nan) {
      kernels::ref::is_nan<T>(x.data<T>(), y.data<bool>(), x.numel());
    } else {
      kernels::ref::is_inf<T>(x.data<T>(), y.data<bool>(), x.numel(), positive, negative);
    }
  };
  if (x.dtype() == DType::kF32) {
    run.template operator()<float>();
  } else if (x.dtype() == DType::kF64) {
    run.template operator()<double>();
  } else {
    return no_kernel(ctx, x.dtype());
  }
  return Status::ok();
}

Status infer_not(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_dtype(ctx, 0, kBoolType, "X"));
  ctx.set_output(0, ctx.input(0));
  return Status::ok();
}

Status run_not(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.allocate_output(0);
  kernels::ref::logical_not(x.data<bool>(), y.data<bool>(), x.numel());
  return Status::ok();
}

}  // namespace

void register_elementwise_unary_ops(OpRegistry& r) {
  for (const UnarySpec& s : unary_specs()) {
    r.add({.op_type = s.op_type,
           .since_versions = s.versions,
           .min_inputs = 1,
           .max_inputs = 1,
           .attrs = s.attrs,
           .infer = infer_unary,
           .run = run_unary});
  }
  r.add({.op_type = "IsNaN",
         .since_versions = {9, 13, 20},
         .min_inputs = 1,
         .max_inputs = 1,
         .attrs = {},
         .infer = infer_float_predicate,
         .run = run_float_predicate});
  r.add({.op_type = "IsInf",
         .since_versions = {10, 20},
         .min_inputs = 1,
         .max_inputs = 1,
         .attrs = {{"detect_negative", AttrType::kInt}, {"detect_positive", AttrType::kInt}},
         .infer = infer_float_predicate,
         .run = run_float_predicate});
  r.add({.op_type = "Not",
         .since_versions = {1},
         .min_inputs = 1,
         .max_inputs = 1,
         .attrs = {},
         .infer = infer_not,
         .run = run_not});
}

}  // namespace kiln::ops
