// kiln.QConv on kiln's x86 INT8 kernels (kernels/x86/qkernels.h): the implicit-GEMM convolution
// for every 1-D and 2-D convolution but depthwise ones (VNNI, AMX, AVX2), and the depthwise
// convolution, plane by plane or (AVX-512, multiplier 1) with 16 channels in the lanes; scales,
// bias, residual, activation and requantization run in the kernels' epilogue. The weights (with
// their per-channel sums, the zero point's correction) are packed once, at engine build time.
#include <fmt/format.h>

#include "kernels/x86/kernels.h"
#include "tactics/builtin_conv.h"
#include "tactics/builtin_util.h"
#include "tactics/quant_util.h"
#include "tactics/x86/x86_common.h"
#include "tactics/x86/x86_quant.h"

namespace kiln::tactics::x86 {
namespace {

namespace cpu = kernels::cpu;
namespace ref = kernels::ref;
using builtin::dims_of;
using builtin::layer_error;

// kDepthwiseLanes: kernels/x86/qkernels.h's QDepthwiseLanesPlan (VNNI only), which small planes
// with many channels favour; the tuner times it against the plane-by-plane kernel.
enum class QConvKind { kGemm, kDepthwise, kDepthwiseLanes };

size_t packed_size(kx::QIsa isa, QConvKind kind, const cpu::Conv2DParams& p) {
  switch (kind) {
    case QConvKind::kGemm:
      return kx::qconv_packed_weights_bytes(isa, p);
    case QConvKind::kDepthwise:
      return kx::qdepthwise_packed_weights_bytes(isa, p);
    case QConvKind::kDepthwiseLanes:
      return kx::qdepthwise_lanes_packed_weights_bytes(p);
  }
  return 0;
}

// The weights in the kernel's layout: prepack()'s result, and what a kernel packs for itself
// when the engine carries no prepacked weights.
Tensor pack_weights(kx::QIsa isa, QConvKind kind, const Tensor& w, int64_t group) {
  const cpu::Conv2DParams p = builtin::conv_weight_params(w, group);
  Tensor packed = packed_bytes(packed_size(isa, kind, p));
  if (kind == QConvKind::kGemm) {
    kx::qconv_pack_weights(isa, p, w.data<int8_t>(), packed.data<uint8_t>());
  } else if (kind == QConvKind::kDepthwise) {
    kx::qdepthwise_pack_weights(isa, p, w.data<int8_t>(), packed.data<uint8_t>());
  } else {
    kx::qdepthwise_lanes_pack_weights(p, w.data<int8_t>(), packed.data<uint8_t>());
  }
  return packed;
}

std::string kind_why_not(const LayerSpec& spec, QConvKind kind) {
  const ir::TensorDesc& x = spec.inputs[0];
  if (!x.has_rank() || (x.rank() != 3 && x.rank() != 4)) {
    return fmt::format("input 0 is {}: this tactic runs 1-D and 2-D convolutions", x.to_string());
  }
  const Tensor& w = *spec.constant(1);
  if (w.rank() != x.rank()) return fmt::format("the weights are {}", w.desc());
  const int64_t group = spec.node->attrs.get_int("group", 1);
  const bool depthwise = group > 1 && w.dim(1) == 1;
  if (kind != QConvKind::kGemm && !depthwise) {
    return fmt::format("not depthwise: group {} with {} input channel(s) per group", group,
                       w.dim(1));
  }
  if (kind == QConvKind::kDepthwiseLanes) {
    return kx::qdepthwise_lanes_why_not(builtin::conv_weight_params(w, group));
  }
  if (kind == QConvKind::kGemm && depthwise) {
    return "depthwise convolution: the depthwise tactic runs it";
  }
  return "";
}

// Why vpmaddubsw could saturate on these weights ("" when it cannot). An engine that stores only
// the weights' dims (packed) was checked when it was built.
std::string maddubs_why_not(const LayerSpec& spec, QConvKind kind) {
  const Tensor& w = *spec.constant(1);
  if (w.raw_data() == nullptr) return "";
  const cpu::Conv2DParams p = builtin::conv_weight_params(w, spec.node->attrs.get_int("group", 1));
  const std::string overflow = kind == QConvKind::kGemm
                                   ? kx::qconv_maddubs_overflow(p, w.data<int8_t>())
                                   : kx::qdepthwise_maddubs_overflow(p, w.data<int8_t>());
  return overflow.empty() ? "" : "the weights could saturate: " + overflow;
}

class X86QConvKernel final : public LayerKernel {
 public:
  X86QConvKernel(const LayerSpec& spec, QConvKind kind, kx::QIsa isa, ref::QuantEpilogue e)
      : node_(*spec.node),
        since_version_(spec.since_version),
        kind_(kind),
        isa_(isa),
        epilogue_(e) {}

  // The engine's prepacked weights when they have the size this layout needs, else packed here.
  Status set_weights(const LayerSpec& spec) {
    const Tensor& w = *spec.constant(1);
    const int64_t group = node_.attrs.get_int("group", 1);
    packed_bytes_ = packed_size(isa_, kind_, builtin::conv_weight_params(w, group));
    KILN_ASSIGN_OR_RETURN(
        packed_, packed_weights(spec, matching_prepacked_bytes(spec, packed_bytes_), packed_bytes_,
                                own_, [&] { return pack_weights(isa_, kind_, w, group); }));
    return Status::ok();
  }

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    KILN_ASSIGN_OR_RETURN(const cpu::Conv2DParams p,
                          builtin::conv2d_params(node_, since_version_, in[0], in[1]));
    const Dims x = dims_of(in[0]);
    Dims y{p.batch, p.out_c};
    for (size_t d = 2; d < x.size(); ++d) y.push_back(d + 1 == x.size() ? p.out_w : p.out_h);
    KILN_RETURN_IF_ERROR(check_qconv_tensors(node_, in, out[0], y, p.out_c, packed_bytes_,
                                             packed_size(isa_, kind_, p)));
    const int threads = pool_threads(thread_pool());
    size_t scratch = 0;
    if (kind_ == QConvKind::kDepthwise) {
      if (!kx::is_depthwise(p)) return layer_error(node_, "the convolution is not depthwise");
      dw_ = kx::plan_qdepthwise(isa_, p);
      tasks_ = dw_.tasks;
      scratch = kx::qdepthwise_scratch_bytes(dw_);
    } else if (kind_ == QConvKind::kDepthwiseLanes) {
      if (const std::string why = kx::qdepthwise_lanes_why_not(p); !why.empty()) {
        return layer_error(node_, "{}", why);
      }
      lanes_ = kx::plan_qdepthwise_lanes(p, threads);
      tasks_ = lanes_.tasks;
      scratch = kx::qdepthwise_lanes_scratch_bytes(lanes_);
    } else {
      gemm_ = kx::plan_qconv(isa_, p, threads);
      tasks_ = gemm_.tasks;
      scratch = kx::qconv_scratch_bytes(gemm_);
    }
    scratch_.resize((scratch + 3) / 4, threads);
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    ref::QuantEpilogue e = epilogue_;
    bind_quant_inputs(e, in);
    const auto* x = static_cast<const uint8_t*>(in[0].data);
    void* y = out[0].data;
    auto body = [&](int64_t slot, int64_t b, int64_t end) {
      auto* s = reinterpret_cast<uint8_t*>(scratch_.slot(slot));
      if (kind_ == QConvKind::kDepthwise) {
        kx::qdepthwise_run(dw_, x, packed_, e, y, s, b, end);
      } else if (kind_ == QConvKind::kDepthwiseLanes) {
        kx::qdepthwise_lanes_run(lanes_, x, packed_, e, y, s, b, end);
      } else {
        kx::qconv_run(gemm_, x, packed_, e, y, s, b, end);
      }
    };
    run_tasks(thread_pool(), tasks_, body);
    return Status::ok();
  }

 private:
  const ir::Node& node_;
  int since_version_;
  QConvKind kind_;
  kx::QIsa isa_;
  ref::QuantEpilogue epilogue_;      // the attributes; pointers are bound per run
  const uint8_t* packed_ = nullptr;  // into own_ or the engine's prepacked tensor
  size_t packed_bytes_ = 0;
  Tensor own_;  // when the engine has no prepacked weights
  kx::QConvPlan gemm_;
  kx::QDepthwisePlan dw_;
  kx::QDepthwiseLanesPlan lanes_;
  int64_t tasks_ = 0;
  ThreadScratch scratch_;
};

std::string tactic_name(QConvKind kind, kx::QIsa isa) {
  if (kind == QConvKind::kDepthwiseLanes) return "qconv.depthwise.lanes.u8s8.avx512";
  const std::string_view maddubs = isa == kx::QIsa::kAvx2Maddubs ? "maddubs." : "";
  if (kind == QConvKind::kDepthwise) {
    return fmt::format("qconv.depthwise.{}u8s8.{}", maddubs, qisa_suffix(isa));
  }
  if (isa == kx::QIsa::kAvx2Maddubs) return "qconv.maddubs.u8s8.avx2";
  if (isa == kx::QIsa::kAmxInt8) return "qconv.amx.u8s8";
  return isa == kx::QIsa::kAvx512Vnni ? "qconv.vnni.u8s8.avx512" : "qconv.u8s8.avx2";
}

class X86QConvTactic final : public X86QuantTactic {
 public:
  X86QConvTactic(QConvKind kind, kx::QIsa isa)
      : X86QuantTactic(tactic_name(kind, isa), "kiln", "QConv", isa), kind_(kind) {}

  std::string why_not(const LayerSpec& spec) const override {
    std::string why = quant_why_not(spec);
    if (why.empty()) why = kind_why_not(spec, kind_);
    if (why.empty() && qisa() == kx::QIsa::kAvx2Maddubs) why = maddubs_why_not(spec, kind_);
    return why;
  }

  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    KILN_ASSIGN_OR_RETURN(const ref::QuantEpilogue e, quant_epilogue_of(spec));
    auto kernel = std::make_unique<X86QConvKernel>(spec, kind_, qisa(), e);
    KILN_RETURN_IF_ERROR(kernel->set_weights(spec));
    return std::unique_ptr<LayerKernel>(std::move(kernel));
  }
  std::span<const size_t> packed_inputs() const override { return kPackedWeightsInput; }

  Result<Tensor> prepack(const LayerSpec& spec) const override {
    const Tensor* w = spec.constant(1);
    if (w == nullptr) return Tensor();
    return pack_weights(qisa(), kind_, *w, spec.node->attrs.get_int("group", 1));
  }

 private:
  QConvKind kind_;
};

}  // namespace

void append_x86_qconv_tactics(std::vector<const Tactic*>& out) {
  static const std::vector<X86QConvTactic> tactics = [] {
    std::vector<X86QConvTactic> v;
    for (kx::QIsa isa : {kx::QIsa::kAvx512Vnni, kx::QIsa::kAvx2, kx::QIsa::kAvx2Maddubs}) {
      for (QConvKind kind : {QConvKind::kGemm, QConvKind::kDepthwise}) v.emplace_back(kind, isa);
    }
    v.emplace_back(QConvKind::kDepthwiseLanes, kx::QIsa::kAvx512Vnni);
    v.emplace_back(QConvKind::kGemm, kx::QIsa::kAmxInt8);  // AMX runs no depthwise kernel
    return v;
  }();
  for (const X86QConvTactic& t : tactics) out.push_back(&t);
}

}  // namespace kiln::tactics::x86
