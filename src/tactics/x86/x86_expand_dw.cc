// kiln.ExpandDwNchw16c (ops/kiln_layout.h) on kiln's x86 nChw16c kernels: an inverted residual
// block's 1x1 expansion and depthwise convolution run a band of output rows at a time
// (kernels::x86::nchw16c_expand_dw_run), so the expanded tensor is never written to memory whole.
// Both layers' weights are packed once, at engine build time, into one tensor.
#include <fmt/format.h>

#include "base/cache_sizes.h"
#include "ops/kiln_layout.h"
#include "tactics/builtin_conv.h"
#include "tactics/builtin_util.h"
#include "tactics/x86/x86_common.h"

namespace kiln::tactics::x86 {
namespace {

namespace cpu = kernels::cpu;
using builtin::input_f32;
using builtin::layer_error;
using builtin::optional_input;

constexpr size_t kExpandW = 1, kExpandB = 2, kDwW = 3, kDwB = 4, kDwZ = 5;
constexpr size_t kPackedInputs[] = {kExpandW, kDwW};

// The expansion as a convolution of X's dims (batch, pixels) with We [E, C, 1, 1].
cpu::Conv2DParams expansion_params(std::span<const int64_t> x, std::span<const int64_t> we) {
  cpu::Conv2DParams p;
  p.batch = x[0];
  p.in_c = we[1];
  p.in_h = p.out_h = x[2];
  p.in_w = p.out_w = x[3];
  p.out_c = we[0];
  return p;
}

// The depthwise layer's weight-only params (channels, window), as its packing needs them.
cpu::Conv2DParams depthwise_weight_params(const ir::Node& node, const Tensor& wd) {
  return builtin::conv_weight_params(wd, node.attrs.get_int("group", 1));
}

size_t packed_floats(const cpu::Conv2DParams& pw, const cpu::Conv2DParams& dw) {
  return kx::nchw16c_conv_packed_weights_floats(pw) + kx::nchw16c_conv_packed_weights_floats(dw);
}

// [the expansion's packed weights][the depthwise layer's].
Tensor pack_both(const ir::Node& node, const Tensor& we, const Tensor& wd) {
  const cpu::Conv2DParams pw = builtin::conv_weight_params(we, 1);
  const cpu::Conv2DParams dw = depthwise_weight_params(node, wd);
  Tensor packed = packed_tensor(packed_floats(pw, dw));
  kx::nchw16c_conv_pack_weights(pw, we.data<float>(), packed.data<float>());
  kx::nchw16c_conv_pack_weights(dw, wd.data<float>(),
                                packed.data<float>() + kx::nchw16c_conv_packed_weights_floats(pw));
  return packed;
}

class ExpandDwKernel final : public LayerKernel {
 public:
  ExpandDwKernel(const LayerSpec& spec, kx::Isa isa)
      : node_(*spec.node), since_version_(spec.since_version), isa_(isa) {
    set_activation(node_, dw_ep_);
    set_activation(node_, pw_ep_, "expand_");
  }

  Status set_weights(const LayerSpec& spec) {
    const Tensor &we = *spec.constant(kExpandW), &wd = *spec.constant(kDwW);
    const cpu::Conv2DParams pw = builtin::conv_weight_params(we, 1);
    pw_floats_ = kx::nchw16c_conv_packed_weights_floats(pw);
    const size_t floats = packed_floats(pw, depthwise_weight_params(node_, wd));
    const float* matched = matching_prepacked(spec, floats);
    // packed_weights checks input 1's values; the depthwise weights' must be there too.
    if (matched == nullptr && wd.raw_data() == nullptr) {
      return unpackable_weights(spec, floats, "floats");
    }
    KILN_ASSIGN_OR_RETURN(packed_, packed_weights(spec, matched, floats, own_,
                                                  [&] { return pack_both(node_, we, wd); }));
    return Status::ok();
  }

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const TensorView &x = in[0], &we = in[kExpandW];
    if (x.rank() != 4 || we.rank() != 4) {
      return layer_error(node_, "X [{}] and We [{}] must be 4-D", dims_to_string(x.dims),
                         dims_to_string(we.dims));
    }
    const cpu::Conv2DParams pw = expansion_params(x.dims, we.dims);
    const std::array<int64_t, 4> e_dims{pw.batch, pw.out_c, pw.out_h, pw.out_w};
    KILN_ASSIGN_OR_RETURN(const cpu::Conv2DParams dw,
                          builtin::conv2d_params(node_, since_version_,
                                                 TensorView{x.dtype, e_dims, nullptr}, in[kDwW]));
    const Dims y{dw.batch, kernels::ref::padded_channels(dw.out_c), dw.out_h, dw.out_w};
    if (!builtin::same_dims(out[0], y)) {
      return layer_error(node_, "output is [{}] but the depthwise convolution gives [{}]",
                         dims_to_string(out[0].dims), dims_to_string(y));
    }
    const int threads = pool_threads(thread_pool());
    // A band's expansion rows take half of L2, the weights and output rows sharing the rest: on
    // MobileNetV2 (Zen 5, 1 MiB L2) half ran 0.98-0.99x a third over 6 interleaved runs (fewer
    // rows computed twice: 16 for 14 output rows at 56x56 against 10 for 8).
    plan_ = kx::plan_nchw16c_expand_dw(isa_, pw, dw, threads,
                                       static_cast<int64_t>(host_cache_sizes().l2_bytes) / 2);
    scratch_.resize(kx::nchw16c_expand_dw_scratch_floats(plan_), threads);
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    kx::Nchw16cExpandDwIo io;
    io.x = input_f32(in, 0);
    io.pw_bias = input_f32(in, kExpandB);
    io.dw_bias = input_f32(in, kDwB);
    if (const TensorView* z = optional_input(in, kDwZ)) {
      io.residual = static_cast<const float*>(z->data);
    }
    io.y = static_cast<float*>(out[0].data);
    run_tasks(thread_pool(), plan_.tasks, [&](int64_t slot, int64_t b, int64_t e) {
      kx::Nchw16cExpandDwIo part = io;
      part.scratch = scratch_.slot(slot);
      kx::nchw16c_expand_dw_run(plan_, packed_, packed_ + pw_floats_, part, pw_ep_, dw_ep_, b, e);
    });
    return Status::ok();
  }

 private:
  const ir::Node& node_;
  int since_version_;
  kx::Isa isa_;
  kx::Epilogue pw_ep_, dw_ep_;  // the two activations
  const float* packed_ = nullptr;
  size_t pw_floats_ = 0;
  Tensor own_;
  kx::Nchw16cExpandDwPlan plan_;
  ThreadScratch scratch_;  // a band of expansion rows per thread
};

class ExpandDwTactic final : public X86Tactic {
 public:
  explicit ExpandDwTactic(kx::Isa isa)
      : X86Tactic("conv.expand_dw.nchw16c.f32", ops::kKilnDomain, ops::kExpandDwNchw16c, isa) {}

  std::string why_not(const LayerSpec& spec) const override {
    std::string why = builtin::require_f32(spec);
    if (why.empty()) why = activation_why_not(*spec.node);
    if (why.empty()) why = activation_why_not(*spec.node, "expand_");
    if (!why.empty()) return why;
    const Tensor *we = spec.constant(kExpandW), *wd = spec.constant(kDwW);
    if (we == nullptr || we->rank() != 4 || wd == nullptr || wd->rank() != 4) {
      return "inputs 1 and 3 (the two layers' weights) are not 4-D constants: this tactic packs "
             "them when the engine is built";
    }
    const cpu::Conv2DParams dw = depthwise_weight_params(*spec.node, *wd);
    if (!kx::nchw16c_is_depthwise(dw) || dw.in_c != we->dims()[0]) {
      return fmt::format("Wd {} with group {} is not a depthwise convolution of We {}'s channels",
                         wd->desc(), dw.group, we->desc());
    }
    return "";
  }

  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    auto kernel = std::make_unique<ExpandDwKernel>(spec, isa());
    KILN_RETURN_IF_ERROR(kernel->set_weights(spec));
    return std::unique_ptr<LayerKernel>(std::move(kernel));
  }
  std::span<const size_t> packed_inputs() const override { return kPackedInputs; }

  Result<Tensor> prepack(const LayerSpec& spec) const override {
    return pack_both(*spec.node, *spec.constant(kExpandW), *spec.constant(kDwW));
  }
};

}  // namespace

void append_x86_expand_dw_tactics(std::vector<const Tactic*>& out) {
  static const ExpandDwTactic tactics[] = {ExpandDwTactic(kx::Isa::kAvx512),
                                           ExpandDwTactic(kx::Isa::kAvx2)};
  for (const auto& t : tactics) out.push_back(&t);
}

}  // namespace kiln::tactics::x86
