// kiln's fused ops (passes/*_fusion) on the builtin kernels: kiln.FusedConv is Conv with its bias,
// residual and activation applied in the conv kernel's epilogue; kiln.FusedGemm is Gemm (or a
// batched MatMul + bias, A flattened to rows) with the activation in the GEMM's epilogue.

#include <array>

#include "kernels/ref/activation.h"
#include "tactics/builtin.h"
#include "tactics/builtin_conv.h"
#include "tactics/builtin_gemm.h"
#include "tactics/builtin_util.h"

namespace kiln::tactics::builtin {
namespace {

namespace cpu = kernels::cpu;
namespace ref = kernels::ref;

// The builtin activation for the node's `activation` attribute; nullopt for none. Every kiln
// activation has a builtin one; an unknown name was refused by the op's shape function already.
std::optional<cpu::UnaryParams> activation_of(const ir::Node& node) {
  const std::optional<ref::Activation> kind =
      ref::parse_activation(node.attrs.get_string("activation", ""));
  const std::vector<float> p = node.attrs.get_floats("activation_params");
  const float alpha = p.size() > 0 ? p[0] : 0.0f, beta = p.size() > 1 ? p[1] : 0.0f;
  auto make = [&](cpu::UnaryKind k) { return cpu::UnaryParams{k, alpha, beta}; };
  switch (kind.value_or(ref::Activation::kNone)) {
    case ref::Activation::kNone:
      return std::nullopt;
    case ref::Activation::kRelu:
      return make(cpu::UnaryKind::kRelu);
    case ref::Activation::kClip:
      return make(cpu::UnaryKind::kClip);
    case ref::Activation::kLeakyRelu:
      return make(cpu::UnaryKind::kLeakyRelu);
    case ref::Activation::kSigmoid:
      return make(cpu::UnaryKind::kSigmoid);
    case ref::Activation::kSilu:
      return make(cpu::UnaryKind::kSilu);
    case ref::Activation::kHardSwish:
      return make(cpu::UnaryKind::kHardSwish);
    case ref::Activation::kHardSigmoid:
      return make(cpu::UnaryKind::kHardSigmoid);
    case ref::Activation::kGelu:
      return make(cpu::UnaryKind::kGelu);
    case ref::Activation::kTanh:
      return make(cpu::UnaryKind::kTanh);
  }
  return std::nullopt;
}

class FusedConvTactic final : public BuiltinTactic {
 public:
  FusedConvTactic(std::string_view name, ConvAlgo algo)
      : BuiltinTactic(name, "FusedConv"), algo_(algo) {}
  std::string_view domain() const override { return "kiln"; }
  std::string why_not(const LayerSpec& spec) const override { return conv_why_not(spec, algo_); }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    ConvEpilogueSpec epilogue;
    epilogue.bias_input = spec.has_input(2) ? 2 : -1;
    epilogue.residual_input = spec.has_input(3) ? 3 : -1;
    epilogue.activation = activation_of(*spec.node);
    return make_conv_kernel(spec, algo_, epilogue);
  }

 private:
  ConvAlgo algo_;
};

// Runs the 2-D GEMM kernel on A viewed as [rows, K] and Y as [rows, N].
class RowsGemmKernel final : public LayerKernel {
 public:
  explicit RowsGemmKernel(std::unique_ptr<LayerKernel> gemm) : gemm_(std::move(gemm)) {}

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const TensorView& a = in[0];
    const int64_t k = a.dim(a.rank() - 1);
    const int64_t rows = k == 0 ? 0 : a.numel() / k;
    a_dims_ = {rows, k};
    y_dims_ = {rows, out[0].dim(out[0].rank() - 1)};
    bind(in, out);
    return gemm_->reshape(std::span(in_.data(), in.size()), out_);
  }
  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    bind(in, out);
    return gemm_->run(std::span(in_.data(), in.size()), out_);
  }

 private:
  void bind(std::span<const TensorView> in, std::span<const TensorView> out) {
    for (size_t i = 0; i < in.size() && i < in_.size(); ++i) in_[i] = in[i];
    in_[0].dims = a_dims_;
    out_[0] = out[0];
    out_[0].dims = y_dims_;
  }

  std::unique_ptr<LayerKernel> gemm_;
  std::array<int64_t, 2> a_dims_{}, y_dims_{};
  std::array<TensorView, 3> in_{};
  std::array<TensorView, 1> out_{};
};

// The spec with A seen as a matrix of rows: what the 2-D GEMM's checks expect.
LayerSpec as_rows(const LayerSpec& spec) {
  LayerSpec rows = spec;
  const ir::TensorDesc& a = spec.inputs[0];
  if (a.has_rank() && a.rank() > 2) {
    rows.inputs[0] = ir::TensorDesc::of(a.dtype, {ir::Dim::unknown(), a.dim(a.rank() - 1)});
    const ir::TensorDesc& y = spec.outputs[0];
    if (y.has_rank() && y.rank() > 0) {
      rows.outputs[0] = ir::TensorDesc::of(y.dtype, {ir::Dim::unknown(), y.dim(y.rank() - 1)});
    }
  }
  return rows;
}

class FusedGemmTactic final : public BuiltinTactic {
 public:
  FusedGemmTactic() : BuiltinTactic("fused_gemm.blocked.f32", "FusedGemm") {}
  std::string_view domain() const override { return "kiln"; }
  std::string why_not(const LayerSpec& spec) const override {
    const ir::TensorDesc& a = spec.inputs[0];
    if (a.has_rank() && a.rank() > 2 && spec.node->attrs.get_int("transA", 0) != 0) {
      return "transA with a batched A";
    }
    if (spec.has_input(3)) return "it adds a residual Z, which this tactic's epilogue does not";
    return gemm_why_not(as_rows(spec));
  }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<LayerKernel> gemm,
                          make_gemm_kernel(as_rows(spec), activation_of(*spec.node)));
    if (spec.inputs[0].rank() <= 2) return gemm;
    return std::unique_ptr<LayerKernel>(new RowsGemmKernel(std::move(gemm)));
  }
};

}  // namespace

void append_fused_tactics(std::vector<const Tactic*>& out) {
  static const FusedConvTactic pointwise("fused_conv.1x1_gemm.f32", ConvAlgo::kPointwise);
  static const FusedConvTactic direct("fused_conv.direct.f32", ConvAlgo::kDirect);
  static const FusedGemmTactic gemm;
  out.push_back(&pointwise);
  out.push_back(&direct);
  out.push_back(&gemm);
}

}  // namespace kiln::tactics::builtin
