// kiln.QConvNhwc on kiln's own AVX-512 VNNI kernel (kernels/x86/qkernels.h, QConvNhwcPlan): an
// indirect convolution that reads each pixel's channels in place, with the whole INT8 epilogue
// (scale, bias, residual, any activation, uint8 or float Y) in its registers. The tuner times it
// against oneDNN's kernels (tactics/onednn/onednn_qconv.cc) layer by layer.
#include <fmt/format.h>

#include "ops/kiln_fused.h"
#include "ops/nhwc.h"
#include "tactics/builtin_conv.h"
#include "tactics/builtin_util.h"
#include "tactics/quant_util.h"
#include "tactics/x86/x86_common.h"
#include "tactics/x86/x86_quant.h"

namespace kiln::tactics::x86 {
namespace {

namespace cpu = kernels::cpu;
namespace ref = kernels::ref;
using builtin::layer_error;

Tensor pack_nhwc_weights(const Tensor& w) {
  const cpu::Conv2DParams p = builtin::conv_weight_params(w, 1);
  Tensor packed = packed_bytes(kx::qconv_nhwc_packed_weights_bytes(p));
  kx::qconv_nhwc_pack_weights(p, w.data<int8_t>(), packed.data<uint8_t>());
  return packed;
}

// The convolution's parameters from the channels-last X and Y (viewed as NCHW).
Result<cpu::Conv2DParams> nhwc_conv_params(const ir::Node& node, const TensorView& x,
                                           const TensorView& w) {
  if (x.rank() != 4 || w.rank() != 4) {
    return layer_error(node, "needs 4-D X and W; X is [{}], W [{}]", dims_to_string(x.dims),
                       dims_to_string(w.dims));
  }
  const Dims nchw = ops::permuted(Dims(x.dims.begin(), x.dims.end()), ops::kNhwcToNchw);
  // kiln.QConvNhwc has Conv's opset-11 attributes.
  return builtin::conv2d_params(node, 11, TensorView{x.dtype, nchw, x.data}, w);
}

class X86QConvNhwcKernel final : public LayerKernel {
 public:
  X86QConvNhwcKernel(const LayerSpec& spec, ref::QuantEpilogue e)
      : node_(*spec.node), epilogue_(e) {}

  Status set_weights(const LayerSpec& spec) {
    const Tensor& w = *spec.constant(1);
    packed_bytes_ = kx::qconv_nhwc_packed_weights_bytes(builtin::conv_weight_params(w, 1));
    KILN_ASSIGN_OR_RETURN(
        packed_, packed_weights(spec, matching_prepacked_bytes(spec, packed_bytes_), packed_bytes_,
                                own_, [&] { return pack_nhwc_weights(w); }));
    return Status::ok();
  }

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    KILN_ASSIGN_OR_RETURN(const cpu::Conv2DParams p, nhwc_conv_params(node_, in[0], in[1]));
    const Dims y{p.batch, p.out_h, p.out_w, p.out_c};
    if (const std::string why = kx::qconv_nhwc_why_not(p); !why.empty()) {
      return layer_error(node_, "{}", why);
    }
    KILN_RETURN_IF_ERROR(check_qconv_tensors(node_, in, out[0], y, p.out_c, packed_bytes_,
                                             kx::qconv_nhwc_packed_weights_bytes(p)));
    const int threads = pool_threads(thread_pool());
    plan_ = kx::plan_qconv_nhwc(p, threads);
    scratch_.resize((kx::qconv_nhwc_scratch_bytes(plan_) + 3) / 4, threads);
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    ref::QuantEpilogue e = epilogue_;
    bind_quant_inputs(e, in);
    const auto* x = static_cast<const uint8_t*>(in[0].data);
    void* y = out[0].data;
    run_tasks(thread_pool(), plan_.tasks, [&](int64_t slot, int64_t b, int64_t end) {
      auto* s = reinterpret_cast<uint8_t*>(scratch_.slot(slot));
      kx::qconv_nhwc_run(plan_, x, packed_, e, y, s, b, end);
    });
    return Status::ok();
  }

 private:
  const ir::Node& node_;
  ref::QuantEpilogue epilogue_;      // the attributes; pointers are bound per run
  const uint8_t* packed_ = nullptr;  // into own_ or the engine's prepacked tensor
  size_t packed_bytes_ = 0;
  Tensor own_;  // when the engine has no prepacked weights
  kx::QConvNhwcPlan plan_;
  ThreadScratch scratch_;
};

class X86QConvNhwcTactic final : public X86QuantTactic {
 public:
  X86QConvNhwcTactic()
      : X86QuantTactic("qconv_nhwc.vnni.u8s8.avx512", ops::kKilnDomain, "QConvNhwc",
                       kx::QIsa::kAvx512Vnni) {}

  // A pixel's residual is read in the same tile that then writes its output.
  bool residual_in_place() const override { return true; }

  std::string why_not(const LayerSpec& spec) const override {
    std::string why = quant_why_not(spec);
    if (why.empty()) why = builtin::require_rank(spec, 0, 4, 4);
    if (!why.empty()) return why;
    const Tensor& w = *spec.constant(1);
    if (w.rank() != 4) return fmt::format("the weights are {}: 2-D convolutions only", w.desc());
    return kx::qconv_nhwc_why_not(
        builtin::conv_weight_params(w, spec.node->attrs.get_int("group", 1)));
  }

  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    KILN_ASSIGN_OR_RETURN(const ref::QuantEpilogue e, quant_epilogue_of(spec));
    auto kernel = std::make_unique<X86QConvNhwcKernel>(spec, e);
    KILN_RETURN_IF_ERROR(kernel->set_weights(spec));
    return std::unique_ptr<LayerKernel>(std::move(kernel));
  }
  std::span<const size_t> packed_inputs() const override { return kPackedWeightsInput; }

  Result<Tensor> prepack(const LayerSpec& spec) const override {
    const Tensor* w = spec.constant(1);
    if (w == nullptr) return Tensor();
    return pack_nhwc_weights(*w);
  }
};

}  // namespace

void append_x86_qconv_nhwc_tactics(std::vector<const Tactic*>& out) {
  static const X86QConvNhwcTactic tactic;
  out.push_back(&tactic);
}

}  // namespace kiln::tactics::x86
