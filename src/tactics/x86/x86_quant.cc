#include "tactics/x86/x86_quant.h"

#include "base/cpu_features.h"
#include "tactics/builtin_util.h"
#include "tactics/quant_util.h"

namespace kiln::tactics::x86 {

CpuFeatureSet qisa_features(kx::QIsa isa) {
  if (isa == kx::QIsa::kAmxInt8) return kIsaAmxInt8;
  return isa == kx::QIsa::kAvx512Vnni ? kIsaAvx512Vnni : kIsaAvx2;
}

std::string_view qisa_suffix(kx::QIsa isa) {
  if (isa == kx::QIsa::kAmxInt8) return "amx";
  return isa == kx::QIsa::kAvx512Vnni ? "avx512" : "avx2";
}

Status check_qconv_tensors(const ir::Node& node, std::span<const TensorView> in,
                           const TensorView& out, const Dims& y, int64_t out_c, size_t packed,
                           size_t needed) {
  using builtin::layer_error;
  if (!builtin::same_dims(out, y)) {
    return layer_error(node, "output is [{}] but the convolution gives [{}]",
                       dims_to_string(out.dims), dims_to_string(y));
  }
  if (in[kQuantScaleInput].numel() != out_c) {
    return layer_error(node, "{} weight scales for {} output channels",
                       in[kQuantScaleInput].numel(), out_c);
  }
  if (const TensorView* b = builtin::optional_input(in, kQuantBiasInput);
      b && b->numel() != out_c) {
    return layer_error(node, "bias has {} values for {} output channels", b->numel(), out_c);
  }
  if (const TensorView* r = builtin::optional_input(in, kQuantResidualInput);
      r && !builtin::same_dims(*r, y)) {
    return layer_error(node, "residual is [{}] but the output is [{}]", dims_to_string(r->dims),
                       dims_to_string(y));
  }
  if (needed != packed) {
    return layer_error(node, "the packed weights hold {} bytes; the weights [{}] need {}", packed,
                       dims_to_string(in[1].dims), needed);
  }
  return Status::ok();
}

}  // namespace kiln::tactics::x86
