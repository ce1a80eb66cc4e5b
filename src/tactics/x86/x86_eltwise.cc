// Standalone activations on kiln's x86 kernels (kernels/x86/kernels.h activate): the fused
// epilogues' vector math over a whole tensor, split over the context's pool. Most activations
// fuse into the convolution or GEMM before them; these are the ones left alone (YOLOv8's Sigmoid
// of its class scores, a gate's Tanh). The builtin eltwise.*.f32 kernels are the portable path.
#include <fmt/format.h>

#include <memory>
#include <tuple>

#include "tactics/builtin_util.h"
#include "tactics/x86/x86_common.h"

namespace kiln::tactics::x86 {
namespace {

class X86ActivationKernel final : public LayerKernel {
 public:
  X86ActivationKernel(const ir::Node& node, kx::Isa isa, kx::Epilogue ep)
      : node_(node), isa_(isa), ep_(ep) {}

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    if (!builtin::same_dims(out[0], in[0].dims)) {
      return builtin::layer_error(node_, "output is [{}] but the input is [{}]",
                                  dims_to_string(out[0].dims), dims_to_string(in[0].dims));
    }
    n_ = in[0].numel();
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const auto* x = static_cast<const float*>(in[0].data);
    auto* y = static_cast<float*>(out[0].data);
    // Element-wise: any split is exact; chunks of at least 16K elements amortize the dispatch.
    parallel::parallel_for(thread_pool(), n_, 16384, [&](int64_t b, int64_t e) {
      kx::activate(isa_, ep_, x + b, y + b, e - b);
    });
    return Status::ok();
  }

 private:
  const ir::Node& node_;
  kx::Isa isa_;
  kx::Epilogue ep_;
  int64_t n_ = 0;
};

// The op's activation and the float attributes it reads.
struct ActivationOp {
  const char* op;
  const char* name;  // in the tactic's name: eltwise.<name>.f32.<isa>
  kx::Act act;
  builtin::ActivationAttrs attrs = {};
};

class X86ActivationTactic final : public X86Tactic {
 public:
  X86ActivationTactic(const ActivationOp& a, kx::Isa isa)
      : X86Tactic(fmt::format("eltwise.{}.f32", a.name), "", a.op, isa), a_(a) {}

  std::string why_not(const LayerSpec& spec) const override {
    std::string why = builtin::require_f32(spec);
    if (why.empty() && a_.act == kx::Act::kClip) why = builtin::clip_bounds_why_not(spec);
    return why;
  }

  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    return std::unique_ptr<LayerKernel>(new X86ActivationKernel(*spec.node, isa(), epilogue(spec)));
  }

 private:
  kx::Epilogue epilogue(const LayerSpec& spec) const {
    kx::Epilogue ep;
    ep.act = a_.act;
    std::tie(ep.act_alpha, ep.act_beta) =
        builtin::activation_params(spec, a_.attrs, a_.act == kx::Act::kClip);
    return ep;
  }

  ActivationOp a_;
};

constexpr ActivationOp kOps[] = {
    {"Relu", "relu", kx::Act::kRelu},
    {"Sigmoid", "sigmoid", kx::Act::kSigmoid},
    {"Tanh", "tanh", kx::Act::kTanh},
    {"HardSigmoid", "hard_sigmoid", kx::Act::kHardSigmoid, {"alpha", 0.2f, "beta", 0.5f}},
    {"HardSwish", "hard_swish", kx::Act::kHardSwish},
    {"LeakyRelu", "leaky_relu", kx::Act::kLeakyRelu, {"alpha", 0.01f}},
    {"Clip", "clip", kx::Act::kClip},
};

}  // namespace

void append_x86_eltwise_tactics(std::vector<const Tactic*>& out) {
  static const std::vector<std::unique_ptr<X86ActivationTactic>> tactics = [] {
    std::vector<std::unique_ptr<X86ActivationTactic>> v;
    for (const ActivationOp& a : kOps) {
      v.push_back(std::make_unique<X86ActivationTactic>(a, kx::Isa::kAvx512));
      v.push_back(std::make_unique<X86ActivationTactic>(a, kx::Isa::kAvx2));
    }
    return v;
  }();
  for (const auto& t : tactics) out.push_back(t.get());
}

}  // namespace kiln::tactics::x86
