// Conv and kiln.FusedConv on kiln's x86 kernels (kernels/x86): the implicit-GEMM convolution for
// 1x1 (any stride: strided pixels are gathered while packing) and kxk kernels, and the depthwise
// convolution; bias, residual and activation run in the kernels' epilogue. Constant weights are
// packed once, at engine build time (prepack), into the microkernel's panel format.
#include <fmt/format.h>

#include <algorithm>

#include "tactics/builtin_conv.h"
#include "tactics/builtin_util.h"
#include "tactics/x86/x86_common.h"

namespace kiln::tactics::x86 {
namespace {

namespace cpu = kernels::cpu;
using builtin::dims_of;
using builtin::input_f32;
using builtin::layer_error;
using builtin::optional_input;
using builtin::same_dims;

enum class ConvKind { kGemm1x1, kIm2col, kDepthwise };

std::string_view kind_name(ConvKind kind) {
  switch (kind) {
    case ConvKind::kGemm1x1:
      return "gemm1x1";
    case ConvKind::kIm2col:
      return "im2col";
    case ConvKind::kDepthwise:
      return "depthwise";
  }
  return "";
}

// W packed into the GEMM microkernel's panels: prepack()'s result, and what a kernel packs for
// itself when the engine carries no prepacked weights.
Tensor pack_weights(kx::Isa isa, const Tensor& w, int64_t group) {
  const cpu::Conv2DParams p = builtin::conv_weight_params(w, group);
  Tensor packed = packed_tensor(kx::conv_gemm_packed_weights_floats(isa, p));
  kx::conv_gemm_pack_weights(isa, p, w.data<float>(), packed.data<float>());
  return packed;
}

std::string kind_why_not(const LayerSpec& spec, ConvKind kind) {
  const ir::TensorDesc& w = spec.inputs[1];
  for (int d = 0; d < w.rank(); ++d) {
    if (!w.dim(d).is_known())
      return fmt::format("the weights' dims {} are not known", w.to_string());
  }
  const int64_t group = spec.node->attrs.get_int("group", 1);
  const bool depthwise = group > 1 && w.dim(1).value == 1;
  std::vector<int64_t> k;
  for (int d = 2; d < w.rank(); ++d) k.push_back(w.dim(d).value);
  const bool one = std::all_of(k.begin(), k.end(), [](int64_t v) { return v == 1; });
  switch (kind) {
    case ConvKind::kDepthwise:
      if (!depthwise) {
        return fmt::format("not depthwise: group {} with {} input channel(s) per group", group,
                           w.dim(1).value);
      }
      return "";
    case ConvKind::kGemm1x1:
      if (!one) return fmt::format("the kernel is {}, not 1x1", fmt::join(k, "x"));
      break;
    case ConvKind::kIm2col:
      if (one) return "a 1x1 kernel: the gemm1x1 tactic runs it";
      break;
  }
  if (depthwise) return "depthwise convolution: the depthwise tactic runs it";
  if (spec.constant(1) == nullptr) {
    return "input 1 (weights) is not a constant: this tactic packs them when the engine is built";
  }
  return "";
}

std::string conv_why_not(const LayerSpec& spec, ConvKind kind, bool fused) {
  std::string why = builtin::conv_why_not(spec, builtin::ConvAlgo::kDirect);  // dtypes, ranks
  if (why.empty() && fused) why = activation_why_not(*spec.node);
  if (why.empty()) why = kind_why_not(spec, kind);
  return why;
}

class X86ConvKernel final : public LayerKernel {
 public:
  X86ConvKernel(const LayerSpec& spec, ConvKind kind, kx::Isa isa, bool fused)
      : node_(*spec.node), since_version_(spec.since_version), kind_(kind), isa_(isa) {
    if (fused) {
      residual_input_ = 3;
      set_activation(node_, epilogue_);
    }
  }

  // Constant weights: the engine's prepacked tensor when there is one (of the size this ISA's
  // layout needs: a plan edited by hand may carry another tactic's), else packed here.
  Status set_weights(const LayerSpec& spec) {
    if (kind_ == ConvKind::kDepthwise) return Status::ok();  // read as they are
    const Tensor& w = *spec.constant(1);
    const int64_t group = node_.attrs.get_int("group", 1);
    packed_floats_ =
        kx::conv_gemm_packed_weights_floats(isa_, builtin::conv_weight_params(w, group));
    KILN_ASSIGN_OR_RETURN(
        packed_, packed_weights(spec, matching_prepacked(spec, packed_floats_), packed_floats_,
                                own_, [&] { return pack_weights(isa_, w, group); }));
    return Status::ok();
  }

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    KILN_ASSIGN_OR_RETURN(cpu::Conv2DParams p,
                          builtin::conv2d_params(node_, since_version_, in[0], in[1]));
    const Dims x = dims_of(in[0]);
    Dims y{p.batch, p.out_c};
    for (size_t d = 2; d < x.size(); ++d) y.push_back(d + 1 == x.size() ? p.out_w : p.out_h);
    if (!same_dims(out[0], y)) {
      return layer_error(node_, "output is [{}] but the convolution gives [{}]",
                         dims_to_string(out[0].dims), dims_to_string(y));
    }
    if (const TensorView* b = optional_input(in, 2); b && b->numel() != p.out_c) {
      return layer_error(node_, "bias has {} values for {} output channels", b->numel(), p.out_c);
    }
    if (const TensorView* r = optional_input(in, residual_input_); r && !same_dims(*r, y)) {
      return layer_error(node_, "residual is [{}] but the output is [{}]", dims_to_string(r->dims),
                         dims_to_string(y));
    }
    const int threads = pool_threads(thread_pool());
    if (kind_ == ConvKind::kDepthwise) {
      if (!kx::is_depthwise(p)) return layer_error(node_, "the convolution is not depthwise");
      dw_ = kx::plan_depthwise(isa_, p);
      tasks_ = dw_.tasks;
      scratch_.resize(kx::depthwise_scratch_floats(dw_), threads);
      return Status::ok();
    }
    if (kx::conv_gemm_packed_weights_floats(isa_, p) != packed_floats_) {
      return layer_error(node_, "the packed weights hold {} floats; the weights [{}] need {}",
                         packed_floats_, dims_to_string(in[1].dims),
                         kx::conv_gemm_packed_weights_floats(isa_, p));
    }
    gemm_ = kx::plan_conv_gemm(isa_, p, threads);
    tasks_ = gemm_.tasks;
    scratch_.resize(kx::conv_gemm_scratch_floats(gemm_), threads);
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    kx::Epilogue ep = epilogue_;
    ep.row_bias = input_f32(in, 2);
    if (const TensorView* r = optional_input(in, residual_input_)) {
      ep.addend = static_cast<const float*>(r->data);
      ep.addend_rs = out[0].dim(out[0].rank() - 1) * (out[0].rank() == 4 ? out[0].dim(2) : 1);
      ep.addend_cs = 1;
    }
    const float* x = input_f32(in, 0);
    auto* y = static_cast<float*>(out[0].data);
    if (kind_ == ConvKind::kDepthwise) {
      const float* w = input_f32(in, 1);
      auto body = [&](int64_t slot, int64_t b, int64_t e) {
        kx::depthwise_run(dw_, x, w, ep, y, scratch_.slot(slot), b, e);
      };
      run_tasks(thread_pool(), tasks_, body);
    } else {
      auto body = [&](int64_t slot, int64_t b, int64_t e) {
        kx::conv_gemm_run(gemm_, x, packed_, ep, y, scratch_.slot(slot), b, e);
      };
      run_tasks(thread_pool(), tasks_, body);
    }
    return Status::ok();
  }

 private:
  const ir::Node& node_;
  int since_version_;
  ConvKind kind_;
  kx::Isa isa_;
  int residual_input_ = -1;
  kx::Epilogue epilogue_;          // the activation; pointers are set per run
  const float* packed_ = nullptr;  // into own_ or the engine's prepacked tensor
  size_t packed_floats_ = 0;
  Tensor own_;  // when the engine has no prepacked weights
  kx::ConvGemmPlan gemm_;
  kx::DepthwisePlan dw_;
  int64_t tasks_ = 0;
  ThreadScratch scratch_;
};

class X86ConvTactic final : public X86Tactic {
 public:
  X86ConvTactic(ConvKind kind, bool fused, kx::Isa isa)
      : X86Tactic(fmt::format("{}conv.{}.f32", fused ? "fused_" : "", kind_name(kind)),
                  fused ? "kiln" : "", fused ? "FusedConv" : "Conv", isa),
        kind_(kind),
        fused_(fused) {}

  std::string why_not(const LayerSpec& spec) const override {
    return conv_why_not(spec, kind_, fused_);
  }
  // The implicit-GEMM kernel accumulates onto a Y that holds the residual (kernels.h).
  bool residual_in_place() const override { return fused_ && kind_ != ConvKind::kDepthwise; }

  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    auto kernel = std::make_unique<X86ConvKernel>(spec, kind_, isa(), fused_);
    KILN_RETURN_IF_ERROR(kernel->set_weights(spec));
    return std::unique_ptr<LayerKernel>(std::move(kernel));
  }
  // The depthwise kernel reads the weights as they are.
  std::span<const size_t> packed_inputs() const override {
    if (kind_ == ConvKind::kDepthwise) return {};
    return kPackedWeightsInput;
  }

  Result<Tensor> prepack(const LayerSpec& spec) const override {
    const Tensor* w = spec.constant(1);
    if (kind_ == ConvKind::kDepthwise || w == nullptr) return Tensor();
    return pack_weights(isa(), *w, spec.node->attrs.get_int("group", 1));
  }

 private:
  ConvKind kind_;
  bool fused_;
};

}  // namespace

void append_x86_conv_tactics(std::vector<const Tactic*>& out) {
  static const std::vector<X86ConvTactic> tactics = [] {
    std::vector<X86ConvTactic> v;
    for (kx::Isa isa : {kx::Isa::kAvx512, kx::Isa::kAvx2}) {
      for (bool fused : {false, true}) {
        for (ConvKind kind : {ConvKind::kGemm1x1, ConvKind::kIm2col, ConvKind::kDepthwise}) {
          v.emplace_back(kind, fused, isa);
        }
      }
    }
    return v;
  }();
  for (const X86ConvTactic& t : tactics) out.push_back(&t);
}

}  // namespace kiln::tactics::x86
