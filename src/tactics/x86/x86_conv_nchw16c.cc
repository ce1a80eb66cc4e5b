// kiln.ConvNchw16c (ops/kiln_layout.h) on kiln's x86 nChw16c kernels: pointwise (1x1, group 1, no
// padding), dense (group 1, any window) and depthwise convolutions with bias, residual and
// activation in the epilogue. The weights are packed once, at engine build time, into 16-channel
// blocks.
#include "tactics/x86/x86_conv_nchw16c.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "base/cache_sizes.h"
#include "kernels/ref/layout.h"
#include "ops/kiln_fused.h"
#include "ops/kiln_layout.h"
#include "tactics/builtin_conv.h"
#include "tactics/builtin_util.h"
#include "tactics/x86/x86_common.h"

namespace kiln::tactics::x86 {

namespace cpu = kernels::cpu;
namespace ref = kernels::ref;
using builtin::input_f32;
using builtin::layer_error;
using builtin::optional_input;
using builtin::same_dims;

bool nchw16c_plain_x(const ir::Node& node) {
  return node.attrs.get_string("x_layout", "") == "nchw";
}

Result<cpu::Conv2DParams> nchw16c_params(const ir::Node& node, int since_version,
                                         const TensorView& x, const TensorView& w) {
  if (x.rank() != 4 || w.rank() != 4) {
    return layer_error(node, "X [{}] and W [{}] must be 4-D", dims_to_string(x.dims),
                       dims_to_string(w.dims));
  }
  const int64_t c = w.dim(1) * node.attrs.get_int("group", 1);
  if (x.dim(1) != (nchw16c_plain_x(node) ? c : ref::padded_channels(c))) {
    return layer_error(node, "{} X [{}] does not hold the {} channels W [{}] reads",
                       nchw16c_plain_x(node) ? "NCHW" : "blocked", dims_to_string(x.dims), c,
                       dims_to_string(w.dims));
  }
  const std::array<int64_t, 4> dims{x.dim(0), c, x.dim(2), x.dim(3)};
  return builtin::conv2d_params(node, since_version, TensorView{x.dtype, dims, x.data}, w);
}

cpu::Conv2DParams nchw16c_weight_params(const ir::Node& node, const Tensor& w) {
  return builtin::conv_weight_params(w, node.attrs.get_int("group", 1));
}

Status check_nchw16c_io(const ir::Node& node, const cpu::Conv2DParams& p,
                        std::span<const TensorView> in, std::span<const TensorView> out) {
  const Dims y{p.batch, ref::padded_channels(p.out_c), p.out_h, p.out_w};
  if (!same_dims(out[0], y)) {
    return layer_error(node, "output is [{}] but the blocked convolution gives [{}]",
                       dims_to_string(out[0].dims), dims_to_string(y));
  }
  if (const TensorView* b = optional_input(in, 2); b && b->numel() != p.out_c) {
    return layer_error(node, "bias has {} values for {} output channels", b->numel(), p.out_c);
  }
  if (const TensorView* r = optional_input(in, 3); r && !same_dims(*r, y)) {
    return layer_error(node, "residual is [{}] but the output is [{}]", dims_to_string(r->dims),
                       dims_to_string(y));
  }
  return Status::ok();
}

namespace {

Tensor pack_weights(const ir::Node& node, const Tensor& w) {
  const cpu::Conv2DParams p = nchw16c_weight_params(node, w);
  Tensor packed = packed_tensor(kx::nchw16c_conv_packed_weights_floats(p));
  kx::nchw16c_conv_pack_weights(p, w.data<float>(), packed.data<float>());
  return packed;
}

// A channel scale S for X is [1 or N, Cp, 1, 1] (ops/kiln_layout.h), Cp = Y's.
Status check_scale_dims(const ir::Node& node, const TensorView& s, const TensorView& x) {
  const bool images = s.rank() == 4 && (s.dim(0) == 1 || s.dim(0) == x.dim(0));
  if (!images || s.dim(1) != x.dim(1) || s.dim(2) != 1 || s.dim(3) != 1) {
    return layer_error(node, "channel scale S [{}] must be [1 or {}, {}, 1, 1] for X [{}]",
                       dims_to_string(s.dims), x.dim(0), x.dim(1), dims_to_string(x.dims));
  }
  return Status::ok();
}

class Nchw16cConvKernel final : public LayerKernel {
 public:
  Nchw16cConvKernel(const LayerSpec& spec, kx::Isa isa)
      : node_(*spec.node), since_version_(spec.since_version), isa_(isa) {
    set_activation(node_, epilogue_);
  }

  Status set_weights(const LayerSpec& spec) {
    const Tensor& w = *spec.constant(1);
    packed_floats_ = kx::nchw16c_conv_packed_weights_floats(nchw16c_weight_params(node_, w));
    KILN_ASSIGN_OR_RETURN(
        packed_, packed_weights(spec, matching_prepacked(spec, packed_floats_), packed_floats_,
                                own_, [&] { return pack_weights(node_, w); }));
    return Status::ok();
  }

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    KILN_ASSIGN_OR_RETURN(const cpu::Conv2DParams p,
                          nchw16c_params(node_, since_version_, in[0], in[1]));
    KILN_RETURN_IF_ERROR(check_nchw16c_io(node_, p, in, out));
    if (p.group != 1 && !kx::nchw16c_is_depthwise(p)) {
      return layer_error(node_, "the nChw16c kernels run group 1 and depthwise convolutions only");
    }
    if (const TensorView* s = optional_input(in, ops::kConvNchw16cScaleInput)) {
      KILN_RETURN_IF_ERROR(check_scale_dims(node_, *s, in[0]));
    }
    if (kx::nchw16c_conv_packed_weights_floats(p) != packed_floats_) {
      return layer_error(node_, "the packed weights hold {} floats; the weights [{}] need {}",
                         packed_floats_, dims_to_string(in[1].dims),
                         kx::nchw16c_conv_packed_weights_floats(p));
    }
    plan_ = kx::plan_nchw16c_conv(isa_, p, pool_threads(thread_pool()), nchw16c_plain_x(node_),
                                  static_cast<int64_t>(host_cache_sizes().l2_bytes));
    if (optional_input(in, ops::kConvNchw16cScaleInput) != nullptr) {
      if (plan_.dense || plan_.depthwise) {
        return layer_error(node_, "a channel scale on X needs a 1x1 convolution");
      }
      scratch_.resize(kx::nchw16c_conv_scratch_floats(plan_), pool_threads(thread_pool()));
    }
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    kx::Nchw16cConvIo io;
    io.x = input_f32(in, 0);
    if (const TensorView* s = optional_input(in, ops::kConvNchw16cScaleInput)) {
      io.x_scale = static_cast<const float*>(s->data);
      io.x_scale_per_image = s->dim(0) != 1;
    }
    io.bias = input_f32(in, 2);
    if (const TensorView* r = optional_input(in, 3)) {
      io.residual = static_cast<const float*>(r->data);
    }
    io.y = static_cast<float*>(out[0].data);
    run_tasks(thread_pool(), plan_.tasks, [&](int64_t slot, int64_t b, int64_t e) {
      kx::Nchw16cConvIo part = io;
      if (part.x_scale != nullptr) part.scratch = scratch_.slot(slot);
      kx::nchw16c_conv_run(plan_, packed_, part, epilogue_, b, e);
    });
    return Status::ok();
  }

 private:
  const ir::Node& node_;
  int since_version_;
  kx::Isa isa_;
  kx::Epilogue epilogue_;  // the activation
  const float* packed_ = nullptr;
  size_t packed_floats_ = 0;
  Tensor own_;
  kx::Nchw16cConvPlan plan_;
  ThreadScratch scratch_;  // a tile's scaled input pixels, per thread, with a channel scale
};

class Nchw16cConvTactic final : public X86Tactic {
 public:
  explicit Nchw16cConvTactic(kx::Isa isa)
      : X86Tactic("conv.nchw16c.f32", ops::kKilnDomain, ops::kConvNchw16c, isa) {}

  std::string why_not(const LayerSpec& spec) const override {
    std::string why = builtin::require_f32(spec);
    if (why.empty()) why = activation_why_not(*spec.node);
    if (!why.empty()) return why;
    const Tensor* w = spec.constant(1);
    if (w == nullptr || w->rank() != 4) {
      return "input 1 (weights) is not a 4-D constant: this tactic packs them when the engine is "
             "built";
    }
    const cpu::Conv2DParams p = nchw16c_weight_params(*spec.node, *w);
    if (p.group != 1 && !kx::nchw16c_is_depthwise(p)) {
      return fmt::format("a {}x{} kernel with group {}: only group 1 and depthwise convolutions",
                         p.k_h, p.k_w, p.group);
    }
    if (nchw16c_plain_x(*spec.node) && p.group != 1) {
      return "X is NCHW (x_layout \"nchw\"): the depthwise kernel reads blocked inputs only";
    }
    const std::vector<int64_t> pads = spec.node->attrs.get_ints("pads");
    const bool unpadded = std::all_of(pads.begin(), pads.end(), [](int64_t v) { return v == 0; });
    const bool pointwise = p.k_h == 1 && p.k_w == 1 && p.group == 1 && unpadded;
    if (!pointwise && spec.has_input(ops::kConvNchw16cScaleInput)) {
      return "a channel scale on X (input 4) fuses into unpadded 1x1 convolutions only";
    }
    return "";
  }
  // Each output vector's residual is read in the epilogue, just before the vector is stored.
  bool residual_in_place() const override { return true; }

  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    auto kernel = std::make_unique<Nchw16cConvKernel>(spec, isa());
    KILN_RETURN_IF_ERROR(kernel->set_weights(spec));
    return std::unique_ptr<LayerKernel>(std::move(kernel));
  }
  std::span<const size_t> packed_inputs() const override { return kPackedWeightsInput; }

  Result<Tensor> prepack(const LayerSpec& spec) const override {
    return pack_weights(*spec.node, *spec.constant(1));
  }
};

}  // namespace

void append_x86_conv_nchw16c_tactics(std::vector<const Tactic*>& out) {
  static const Nchw16cConvTactic tactics[] = {Nchw16cConvTactic(kx::Isa::kAvx512),
                                              Nchw16cConvTactic(kx::Isa::kAvx2)};
  for (const auto& t : tactics) out.push_back(&t);
}

}  // namespace kiln::tactics::x86
