// Conv with the builtin direct and 1x1-as-GEMM kernels.
#include "tactics/builtin_conv.h"

#include <fmt/format.h>

#include <algorithm>

#include "kernels/cpu/conv.h"
#include "ops/nn_conv.h"
#include "tactics/builtin.h"
#include "tactics/builtin_util.h"

namespace kiln::tactics::builtin {
namespace {

namespace cpu = kernels::cpu;

// The kernel extents as far as the spec knows them (kernel_shape, else W's dims); empty when some
// extent is unknown.
std::vector<int64_t> known_kernel(const LayerSpec& spec) {
  std::vector<int64_t> k = spec.node->attrs.get_ints("kernel_shape");
  if (!k.empty()) return k;
  const ir::TensorDesc& w = spec.inputs[1];
  for (int d = 2; d < w.rank(); ++d) {
    if (!w.dim(d).is_known()) return {};
    k.push_back(w.dim(d).value);
  }
  return k;
}

std::string pointwise_why_not(const LayerSpec& spec) {
  const std::vector<int64_t> k = known_kernel(spec);
  if (k.empty()) return "the kernel size is not known";
  if (std::any_of(k.begin(), k.end(), [](int64_t v) { return v != 1; })) {
    return fmt::format("the kernel is {}, not 1x1", fmt::join(k, "x"));
  }
  const std::vector<int64_t> strides = spec.node->attrs.get_ints("strides");
  if (std::any_of(strides.begin(), strides.end(), [](int64_t v) { return v != 1; })) {
    return fmt::format("strides [{}] are not all 1", fmt::join(strides, ", "));
  }
  const std::vector<int64_t> pads = spec.node->attrs.get_ints("pads");
  if (std::any_of(pads.begin(), pads.end(), [](int64_t v) { return v != 0; })) {
    return fmt::format("pads [{}] are not all 0", fmt::join(pads, ", "));
  }
  return "";
}

class ConvKernel final : public LayerKernel {
 public:
  ConvKernel(const LayerSpec& spec, ConvAlgo algo, const ConvEpilogueSpec& ep)
      : node_(*spec.node), since_version_(spec.since_version), algo_(algo), ep_(ep) {
    if (ep.activation) activation_ = *ep.activation;
  }

  // Packs constant weights once; their layout depends on W's dims and `group` only.
  void pack_constant_weights(const Tensor& w) {
    pack(conv_weight_params(w, node_.attrs.get_int("group", 1)), w.data<float>());
    weights_packed_ = true;
  }

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    KILN_ASSIGN_OR_RETURN(p_, conv2d_params(node_, since_version_, in[0], in[1]));
    const Dims x = dims_of(in[0]);
    Dims y{p_.batch, p_.out_c};
    for (size_t d = 2; d < x.size(); ++d) y.push_back(d + 1 == x.size() ? p_.out_w : p_.out_h);
    if (!same_dims(out[0], y)) {
      return layer_error(node_, "output is [{}] but the convolution gives [{}]",
                         dims_to_string(out[0].dims), dims_to_string(y));
    }
    if (const TensorView* b = optional_input(in, ep_.bias_input); b && b->numel() != p_.out_c) {
      return layer_error(node_, "bias has {} values for {} output channels", b->numel(), p_.out_c);
    }
    if (const TensorView* r = optional_input(in, ep_.residual_input); r && !same_dims(*r, y)) {
      return layer_error(node_, "residual is [{}] but the output is [{}]", dims_to_string(r->dims),
                         dims_to_string(y));
    }
    if (algo_ == ConvAlgo::kPointwise && !cpu::conv2d_is_pointwise(p_)) {
      return layer_error(node_, "the 1x1 GEMM kernel got a convolution that is not pointwise");
    }
    const bool direct = algo_ == ConvAlgo::kDirect;
    scratch_.resize(direct ? cpu::conv2d_direct_scratch_floats(p_)
                           : cpu::conv2d_pointwise_scratch_floats(p_));
    if (!weights_packed_) {
      packed_.resize(direct ? cpu::conv2d_direct_packed_weights_floats(p_)
                            : cpu::conv2d_pointwise_packed_weights_floats(p_));
    }
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    if (!weights_packed_) pack(p_, input_f32(in, 1));
    cpu::ConvEpilogue ep;
    if (const TensorView* b = optional_input(in, ep_.bias_input)) {
      ep.bias = static_cast<const float*>(b->data);
    }
    if (const TensorView* r = optional_input(in, ep_.residual_input)) {
      ep.residual = static_cast<const float*>(r->data);
    }
    if (ep_.activation) {
      ep.activate = cpu::activate_unary;
      ep.activate_ctx = &activation_;
    }
    const float* x = input_f32(in, 0);
    auto* y = static_cast<float*>(out[0].data);
    if (algo_ == ConvAlgo::kDirect) {
      cpu::conv2d_direct(p_, x, packed_.data(), ep, y, scratch_.data());
    } else {
      cpu::conv2d_pointwise(p_, x, packed_.data(), ep, y, scratch_.data());
    }
    return Status::ok();
  }

 private:
  void pack(const cpu::Conv2DParams& p, const float* w) {
    if (algo_ == ConvAlgo::kDirect) {
      packed_.resize(cpu::conv2d_direct_packed_weights_floats(p));
      cpu::conv2d_direct_pack_weights(p, w, packed_.data());
    } else {
      packed_.resize(cpu::conv2d_pointwise_packed_weights_floats(p));
      cpu::conv2d_pointwise_pack_weights(p, w, packed_.data());
    }
  }

  const ir::Node& node_;
  int since_version_;
  ConvAlgo algo_;
  ConvEpilogueSpec ep_;
  cpu::UnaryParams activation_;
  cpu::Conv2DParams p_;
  bool weights_packed_ = false;  // constant weights, packed at instantiate()
  FloatBuffer packed_;
  FloatBuffer scratch_;
};

class ConvTactic final : public BuiltinTactic {
 public:
  ConvTactic(std::string_view name, ConvAlgo algo) : BuiltinTactic(name, "Conv"), algo_(algo) {}
  std::string why_not(const LayerSpec& spec) const override { return conv_why_not(spec, algo_); }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    return make_conv_kernel(spec, algo_, ConvEpilogueSpec{});
  }

 private:
  ConvAlgo algo_;
};

}  // namespace

Result<cpu::Conv2DParams> conv2d_params(const ir::Node& node, int since_version,
                                        const TensorView& x, const TensorView& w) {
  const ops::NodeContext ctx(node, since_version);
  KILN_ASSIGN_OR_RETURN(kernels::ref::ConvParams rp,
                        ops::conv_kernel_params(ctx, shape_only(x), shape_only(w)));
  cpu::Conv2DParams p;
  p.batch = rp.batch;
  p.in_c = rp.in_channels;
  p.out_c = rp.out_channels;
  p.group = rp.group;
  const size_t h = rp.in_dims.size() == 2 ? 0 : 1;  // 1-D: the width is the only spatial axis
  const size_t wd = rp.in_dims.size() - 1;
  if (h == 0) {
    p.in_h = rp.in_dims[0];
    p.out_h = rp.out_dims[0];
    p.k_h = rp.kernel[0];
    p.stride_h = rp.strides[0];
    p.dil_h = rp.dilations[0];
    p.pad_top = rp.pads_begin[0];
  }
  p.in_w = rp.in_dims[wd];
  p.out_w = rp.out_dims[wd];
  p.k_w = rp.kernel[wd];
  p.stride_w = rp.strides[wd];
  p.dil_w = rp.dilations[wd];
  p.pad_left = rp.pads_begin[wd];
  return p;
}

cpu::Conv2DParams conv_weight_params(const Tensor& w, int64_t group) {
  cpu::Conv2DParams p;
  p.group = group;
  p.out_c = w.dim(0);
  p.in_c = w.dim(1) * group;
  p.k_w = w.dim(w.rank() - 1);
  p.k_h = w.rank() == 4 ? w.dim(2) : 1;
  return p;
}

std::string conv_why_not(const LayerSpec& spec, ConvAlgo algo) {
  std::string why = require_f32(spec);
  if (why.empty()) why = require_rank(spec, 0, 3, 4);
  if (why.empty()) why = require_rank(spec, 1, spec.inputs[0].rank(), spec.inputs[0].rank());
  if (!why.empty()) return why;
  return algo == ConvAlgo::kPointwise ? pointwise_why_not(spec) : "";
}

Result<std::unique_ptr<LayerKernel>> make_conv_kernel(const LayerSpec& spec, ConvAlgo algo,
                                                      const ConvEpilogueSpec& epilogue) {
  auto kernel = std::make_unique<ConvKernel>(spec, algo, epilogue);
  if (const Tensor* w = spec.constant(1); w != nullptr) {
    kernel->pack_constant_weights(*w);
  }
  return std::unique_ptr<LayerKernel>(std::move(kernel));
}

void append_conv_tactics(std::vector<const Tactic*>& out) {
  out.push_back(&conv_pointwise_tactic());
  out.push_back(&conv_direct_tactic());
}

const Tactic& conv_pointwise_tactic() {
  static const ConvTactic tactic("conv.1x1_gemm.f32", ConvAlgo::kPointwise);
  return tactic;
}

const Tactic& conv_direct_tactic() {
  static const ConvTactic tactic("conv.direct.f32", ConvAlgo::kDirect);
  return tactic;
}

}  // namespace kiln::tactics::builtin
