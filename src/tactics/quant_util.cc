#include "tactics/quant_util.h"

#include <fmt/format.h>

#include "ops/kiln_fused.h"
#include "ops/kiln_quant.h"

namespace kiln::tactics {
namespace {

std::string expect_dtype(const LayerSpec& spec, size_t i, std::string_view name, DType want) {
  if (!spec.has_input(i)) return fmt::format("input {} ({}) is absent", i, name);
  const DType got = spec.inputs[i].dtype;
  if (got != want) {
    return fmt::format("input {} ({}) is {}, expected {}", i, name, dtype_name(got),
                       dtype_name(want));
  }
  return "";
}

}  // namespace

std::string_view quant_input_prefix(const ir::Node& node) {
  return node.op_type == "QConv" || node.op_type == "QConvNhwc" ? "x" : "a";
}

std::string quant_why_not(const LayerSpec& spec) {
  const bool conv = quant_input_prefix(*spec.node) == "x";
  std::string why = expect_dtype(spec, 0, conv ? "X" : "A", DType::kU8);
  if (why.empty()) why = expect_dtype(spec, 1, conv ? "W" : "B", DType::kI8);
  if (why.empty()) why = expect_dtype(spec, kQuantScaleInput, "scales", DType::kF32);
  if (why.empty() && spec.has_input(kQuantBiasInput)) {
    why = expect_dtype(spec, kQuantBiasInput, "bias", DType::kF32);
  }
  if (!why.empty()) return why;
  for (size_t i : {size_t{1}, kQuantScaleInput, kQuantBiasInput}) {
    if (spec.has_input(i) && spec.constant(i) == nullptr) {
      return fmt::format(
          "input {} is not a constant: the weights, scales and bias are packed "
          "when the engine is built",
          i);
    }
  }
  if (spec.has_input(kQuantResidualInput)) {
    const DType z = spec.inputs[kQuantResidualInput].dtype;
    if (z != DType::kF32 && z != DType::kU8) {
      return fmt::format("the residual is {}, expected float32 or uint8", dtype_name(z));
    }
  }
  const DType y = spec.outputs.empty() ? DType::kUndefined : spec.outputs[0].dtype;
  if (y != DType::kF32 && y != DType::kU8) {
    return fmt::format("the output is {}, expected float32 or uint8", dtype_name(y));
  }
  Result<kernels::ref::QuantEpilogue> e = quant_epilogue_of(spec);
  if (!e.is_ok()) return e.status().message();
  return "";
}

Result<kernels::ref::QuantEpilogue> quant_epilogue_of(const LayerSpec& spec) {
  const ops::NodeContext ctx(*spec.node, spec.since_version);
  const bool z_u8 =
      spec.has_input(kQuantResidualInput) && spec.inputs[kQuantResidualInput].dtype == DType::kU8;
  KILN_ASSIGN_OR_RETURN(const ops::QuantAttrs q,
                        ops::read_quant_attrs(ctx, quant_input_prefix(*spec.node), z_u8));
  kernels::ref::QuantEpilogue e;
  KILN_ASSIGN_OR_RETURN(e.act, ops::read_activation(ctx));
  e.in_scale = q.in_scale;
  e.in_zero = q.in_zero;
  e.z_scale = q.z_scale;
  e.z_zero = q.z_zero;
  e.out_u8 = q.out_u8;
  e.y_scale = q.y_scale;
  e.y_zero = q.y_zero;
  return e;
}

void bind_quant_inputs(kernels::ref::QuantEpilogue& e, std::span<const TensorView> in) {
  e.w_scale = static_cast<const float*>(in[kQuantScaleInput].data);
  e.bias = nullptr;
  e.z_f32 = nullptr;
  e.z_u8 = nullptr;
  if (in.size() > kQuantBiasInput && in[kQuantBiasInput].dtype != DType::kUndefined) {
    e.bias = static_cast<const float*>(in[kQuantBiasInput].data);
  }
  if (in.size() > kQuantResidualInput && in[kQuantResidualInput].dtype != DType::kUndefined) {
    const TensorView& z = in[kQuantResidualInput];
    if (z.dtype == DType::kU8) {
      e.z_u8 = static_cast<const uint8_t*>(z.data);
    } else {
      e.z_f32 = static_cast<const float*>(z.data);
    }
  }
}

const uint8_t* matching_prepacked_bytes(const LayerSpec& spec, size_t bytes) {
  const Tensor* pre = spec.prepacked;
  if (pre == nullptr || pre->dtype() != DType::kU8 || static_cast<size_t>(pre->numel()) != bytes) {
    return nullptr;
  }
  return pre->data<uint8_t>();
}

}  // namespace kiln::tactics
