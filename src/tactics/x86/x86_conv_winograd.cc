// kiln.ConvNchw16c (ops/kiln_layout.h) by Winograd's F(m x m, 3x3) on kiln's x86 kernels
// (kernels.h): 3x3, undilated, group-1 convolutions between blocked tensors, stride 1 (m = 2, 3, 4)
// or 2 (m = 2), with bias, residual and activation in the inverse transform. The transformed
// weights are computed once, at engine build time. The builder times these against the direct
// kernels: they do a quarter (F(4x4)) to 0.69x (stride 2) of the multiplications, plus the
// transforms.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "ops/kiln_layout.h"
#include "tactics/builtin_conv.h"
#include "tactics/builtin_util.h"
#include "tactics/x86/x86_common.h"
#include "tactics/x86/x86_conv_nchw16c.h"

namespace kiln::tactics::x86 {
namespace {

namespace cpu = kernels::cpu;
using builtin::input_f32;
using builtin::layer_error;
using builtin::optional_input;

Tensor pack_weights(const ir::Node& node, const Tensor& w, int m, int stride) {
  const cpu::Conv2DParams p = nchw16c_weight_params(node, w);
  Tensor packed = packed_tensor(kx::winograd_packed_weights_floats(p, m, stride));
  kx::winograd_pack_weights(p, m, stride, w.data<float>(), packed.data<float>());
  return packed;
}

// "F(2x2, 3x3)", "F(2x2, 3x3) with stride 2".
std::string variant_name(int m, int stride) {
  return fmt::format("Winograd F({}x{}, 3x3){}", m, m, stride == 1 ? "" : " with stride 2");
}

class WinogradKernel final : public LayerKernel {
 public:
  WinogradKernel(const LayerSpec& spec, kx::Isa isa, int m, int stride)
      : node_(*spec.node), since_version_(spec.since_version), isa_(isa), m_(m), stride_(stride) {
    set_activation(node_, epilogue_);
  }

  Status set_weights(const LayerSpec& spec) {
    const Tensor& w = *spec.constant(1);
    packed_floats_ =
        kx::winograd_packed_weights_floats(nchw16c_weight_params(node_, w), m_, stride_);
    KILN_ASSIGN_OR_RETURN(
        packed_, packed_weights(spec, matching_prepacked(spec, packed_floats_), packed_floats_,
                                own_, [&] { return pack_weights(node_, w, m_, stride_); }));
    return Status::ok();
  }

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    KILN_ASSIGN_OR_RETURN(const cpu::Conv2DParams p,
                          nchw16c_params(node_, since_version_, in[0], in[1]));
    KILN_RETURN_IF_ERROR(check_nchw16c_io(node_, p, in, out));
    if (!kx::winograd_applies(p, m_, stride_) || nchw16c_plain_x(node_)) {
      return layer_error(node_,
                         "{} runs 3x3, stride-{}, undilated, group-1 convolutions between blocked "
                         "tensors",
                         variant_name(m_, stride_), stride_);
    }
    if (kx::winograd_packed_weights_floats(p, m_, stride_) != packed_floats_) {
      return layer_error(node_, "the transformed weights hold {} floats; the weights [{}] need {}",
                         packed_floats_, dims_to_string(in[1].dims),
                         kx::winograd_packed_weights_floats(p, m_, stride_));
    }
    plan_ = kx::plan_winograd(isa_, p, m_, pool_threads(thread_pool()));
    scratch_.resize(kx::winograd_scratch_floats(plan_), pool_threads(thread_pool()));
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    kx::WinogradIo io;
    io.x = input_f32(in, 0);
    io.bias = input_f32(in, 2);
    if (const TensorView* r = optional_input(in, 3)) {
      io.residual = static_cast<const float*>(r->data);
    }
    io.y = static_cast<float*>(out[0].data);
    run_tasks(thread_pool(), plan_.tasks, [&](int64_t slot, int64_t b, int64_t e) {
      kx::WinogradIo part = io;
      part.scratch = scratch_.slot(slot);
      kx::winograd_run(plan_, packed_, part, epilogue_, b, e);
    });
    return Status::ok();
  }

 private:
  const ir::Node& node_;
  int since_version_;
  kx::Isa isa_;
  int m_;
  int stride_;
  kx::Epilogue epilogue_;  // the activation
  const float* packed_ = nullptr;
  size_t packed_floats_ = 0;
  Tensor own_;
  kx::WinogradPlan plan_;
  ThreadScratch scratch_;  // a task's transformed input and products, per thread
};

class WinogradTactic final : public X86Tactic {
 public:
  WinogradTactic(kx::Isa isa, int m, int stride)
      : X86Tactic(fmt::format("conv.winograd.f{}x3{}.nchw16c.f32", m, stride == 1 ? "" : "s2"),
                  ops::kKilnDomain, ops::kConvNchw16c, isa),
        m_(m),
        stride_(stride) {}

  std::string why_not(const LayerSpec& spec) const override {
    std::string why = builtin::require_f32(spec);
    if (why.empty()) why = activation_why_not(*spec.node);
    if (!why.empty()) return why;
    const Tensor* w = spec.constant(1);
    if (w == nullptr || w->rank() != 4) {
      return "input 1 (weights) is not a 4-D constant: this tactic transforms them when the "
             "engine is built";
    }
    if (nchw16c_plain_x(*spec.node)) return "X is NCHW (x_layout \"nchw\"): blocked inputs only";
    if (spec.has_input(ops::kConvNchw16cScaleInput)) {
      return "a channel scale on X (input 4) fuses into unpadded 1x1 convolutions only";
    }
    const cpu::Conv2DParams p = nchw16c_weight_params(*spec.node, *w);
    const std::vector<int64_t> strides = spec.node->attrs.get_ints("strides");
    const std::vector<int64_t> dilations = spec.node->attrs.get_ints("dilations");
    const auto all = [](const std::vector<int64_t>& v, int64_t want) {
      return std::all_of(v.begin(), v.end(), [&](int64_t x) { return x == want; });
    };
    if (p.k_h != 3 || p.k_w != 3 || p.group != 1 || !all(strides, stride_) || !all(dilations, 1)) {
      return fmt::format(
          "a {}x{} kernel with group {}, strides [{}], dilations [{}]: {} runs 3x3 kernels of "
          "group 1 with stride {} and dilation 1",
          p.k_h, p.k_w, p.group, fmt::join(strides, ", "), fmt::join(dilations, ", "),
          variant_name(m_, stride_), stride_);
    }
    return "";
  }
  // Each output vector's residual is read in the inverse transform, just before it is stored.
  bool residual_in_place() const override { return true; }

  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    auto kernel = std::make_unique<WinogradKernel>(spec, isa(), m_, stride_);
    KILN_RETURN_IF_ERROR(kernel->set_weights(spec));
    return std::unique_ptr<LayerKernel>(std::move(kernel));
  }
  std::span<const size_t> packed_inputs() const override { return kPackedWeightsInput; }

  Result<Tensor> prepack(const LayerSpec& spec) const override {
    return pack_weights(*spec.node, *spec.constant(1), m_, stride_);
  }

 private:
  int m_;
  int stride_;
};

}  // namespace

void append_x86_conv_winograd_tactics(std::vector<const Tactic*>& out) {
  static const WinogradTactic tactics[] = {
      WinogradTactic(kx::Isa::kAvx512, 4, 1), WinogradTactic(kx::Isa::kAvx512, 3, 1),
      WinogradTactic(kx::Isa::kAvx512, 2, 1), WinogradTactic(kx::Isa::kAvx512, 2, 2),
      WinogradTactic(kx::Isa::kAvx2, 4, 1),   WinogradTactic(kx::Isa::kAvx2, 3, 1),
      WinogradTactic(kx::Isa::kAvx2, 2, 1),   WinogradTactic(kx::Isa::kAvx2, 2, 2)};
  for (const auto& t : tactics) out.push_back(&t);
}

}  // namespace kiln::tactics::x86
