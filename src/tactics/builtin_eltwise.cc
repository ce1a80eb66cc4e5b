// Element-wise ops with the builtin kernels: activations and unary math, Clip with constant bounds,
// and Add/Sub/Mul/Div with numpy broadcasting planned in reshape().
#include <fmt/format.h>

#include "kernels/cpu/elementwise.h"
#include "tactics/builtin.h"
#include "tactics/builtin_util.h"

namespace kiln::tactics::builtin {
namespace {

namespace cpu = kernels::cpu;
using cpu::BinaryKind;
using cpu::UnaryKind;

// --- unary ---------------------------------------------------------------------------------------

class UnaryKernel final : public LayerKernel {
 public:
  UnaryKernel(const ir::Node& node, cpu::UnaryParams p) : node_(node), p_(p) {}

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    if (!same_dims(out[0], in[0].dims)) {
      return layer_error(node_, "output is [{}] but the input is [{}]", dims_to_string(out[0].dims),
                         dims_to_string(in[0].dims));
    }
    n_ = in[0].numel();
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const float* x = input_f32(in, 0);
    auto* y = static_cast<float*>(out[0].data);
    // Element-wise: any split is exact; chunks of at least 16K elements amortize the dispatch.
    parallel::parallel_for(thread_pool(), n_, 16384,
                           [&](int64_t b, int64_t e) { cpu::unary(p_, x + b, y + b, e - b); });
    return Status::ok();
  }

 private:
  const ir::Node& node_;
  cpu::UnaryParams p_;
  int64_t n_ = 0;
};

class UnaryTactic final : public BuiltinTactic {
 public:
  UnaryTactic(std::string_view name, std::string_view op, UnaryKind kind,
              ActivationAttrs attrs = {})
      : BuiltinTactic(name, op), kind_(kind), attrs_(attrs) {}

  std::string why_not(const LayerSpec& spec) const override {
    std::string why = require_f32(spec);
    if (why.empty() && kind_ == UnaryKind::kClip) why = clip_bounds_why_not(spec);
    return why;
  }

  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    return std::unique_ptr<LayerKernel>(new UnaryKernel(*spec.node, params(spec)));
  }

 private:
  cpu::UnaryParams params(const LayerSpec& spec) const {
    const auto [alpha, beta] = activation_params(spec, attrs_, kind_ == UnaryKind::kClip);
    return cpu::UnaryParams{kind_, alpha, beta};
  }

  UnaryKind kind_;
  ActivationAttrs attrs_;
};

// --- binary --------------------------------------------------------------------------------------

class BinaryKernel final : public LayerKernel {
 public:
  BinaryKernel(const ir::Node& node, BinaryKind kind) : node_(node), kind_(kind) {}

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    if (!cpu::make_broadcast_plan(in[0].dims, in[1].dims, out[0].dims, plan_)) {
      return layer_error(node_, "broadcasting [{}] with [{}] needs more than {} axes",
                         dims_to_string(in[0].dims), dims_to_string(in[1].dims),
                         cpu::kMaxBroadcastRank);
    }
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    cpu::binary(kind_, plan_, input_f32(in, 0), input_f32(in, 1), static_cast<float*>(out[0].data));
    return Status::ok();
  }

 private:
  const ir::Node& node_;
  BinaryKind kind_;
  cpu::BroadcastPlan plan_;
};

class BinaryTactic final : public BuiltinTactic {
 public:
  BinaryTactic(std::string_view name, std::string_view op, BinaryKind kind)
      : BuiltinTactic(name, op), kind_(kind) {}

  std::string why_not(const LayerSpec& spec) const override {
    if (spec.since_version < 7) {
      return fmt::format("opset {} broadcasting (attributes broadcast and axis) is not handled",
                         spec.since_version);
    }
    std::string why = require_f32(spec);
    if (!why.empty()) return why;
    const ir::TensorDesc& y = spec.outputs[0];
    if (!y.has_rank()) return "the output rank is unknown";
    if (y.rank() > cpu::kMaxBroadcastRank) {
      return fmt::format("the output has rank {}; at most {} is handled", y.rank(),
                         cpu::kMaxBroadcastRank);
    }
    return "";
  }

  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    return std::unique_ptr<LayerKernel>(new BinaryKernel(*spec.node, kind_));
  }

 private:
  BinaryKind kind_;
};

}  // namespace

void append_eltwise_tactics(std::vector<const Tactic*>& out) {
  static const BinaryTactic binary[] = {
      {"eltwise.add.f32", "Add", BinaryKind::kAdd},
      {"eltwise.sub.f32", "Sub", BinaryKind::kSub},
      {"eltwise.mul.f32", "Mul", BinaryKind::kMul},
      {"eltwise.div.f32", "Div", BinaryKind::kDiv},
  };
  static const UnaryTactic unary[] = {
      {"eltwise.relu.f32", "Relu", UnaryKind::kRelu},
      {"eltwise.sigmoid.f32", "Sigmoid", UnaryKind::kSigmoid},
      {"eltwise.tanh.f32", "Tanh", UnaryKind::kTanh},
      {"eltwise.exp.f32", "Exp", UnaryKind::kExp},
      {"eltwise.erf.f32", "Erf", UnaryKind::kErf},
      {"eltwise.sqrt.f32", "Sqrt", UnaryKind::kSqrt},
      {"eltwise.neg.f32", "Neg", UnaryKind::kNeg},
      {"eltwise.abs.f32", "Abs", UnaryKind::kAbs},
      {"eltwise.hard_sigmoid.f32",
       "HardSigmoid",
       UnaryKind::kHardSigmoid,
       {"alpha", 0.2f, "beta", 0.5f}},
      {"eltwise.hard_swish.f32", "HardSwish", UnaryKind::kHardSwish},
      {"eltwise.leaky_relu.f32", "LeakyRelu", UnaryKind::kLeakyRelu, {"alpha", 0.01f}},
      {"eltwise.clip.f32", "Clip", UnaryKind::kClip},
  };
  for (const auto& t : binary) out.push_back(&t);
  for (const auto& t : unary) out.push_back(&t);
}

}  // namespace kiln::tactics::builtin
