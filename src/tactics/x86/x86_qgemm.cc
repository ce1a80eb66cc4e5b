// kiln.QGemm on kiln's x86 INT8 GEMM (kernels/x86/qkernels.h): A's leading dims are one tall
// matrix of rows against the constant B, packed (with its column sums, the zero point's
// correction) when the engine is built; scales, bias, residual, activation and requantization run
// in the kernel's epilogue.
#include <fmt/format.h>

#include "tactics/builtin_util.h"
#include "tactics/quant_util.h"
#include "tactics/x86/x86_common.h"
#include "tactics/x86/x86_quant.h"

namespace kiln::tactics::x86 {
namespace {

namespace ref = kernels::ref;
using builtin::layer_error;
using builtin::optional_input;

Tensor pack_b(kx::QIsa isa, const Tensor& b) {
  const int64_t k = b.dim(0), n = b.dim(1);
  Tensor packed = packed_bytes(kx::qgemm_packed_b_bytes(isa, k, n));
  kx::qgemm_pack_b(isa, b.data<int8_t>(), k, n, packed.data<uint8_t>());
  return packed;
}

class X86QGemmKernel final : public LayerKernel {
 public:
  X86QGemmKernel(const LayerSpec& spec, kx::QIsa isa, ref::QuantEpilogue e)
      : node_(*spec.node), isa_(isa), epilogue_(e) {}

  Status set_weights(const LayerSpec& spec) {
    const Tensor& b = *spec.constant(1);
    k_ = b.dim(0);
    n_ = b.dim(1);
    const size_t bytes = kx::qgemm_packed_b_bytes(isa_, k_, n_);
    KILN_ASSIGN_OR_RETURN(packed_, packed_weights(spec, matching_prepacked_bytes(spec, bytes),
                                                  bytes, own_, [&] { return pack_b(isa_, b); }));
    return Status::ok();
  }

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const TensorView& a = in[0];
    const int64_t k = a.dim(a.rank() - 1);
    const int64_t m = k == 0 ? 0 : a.numel() / k;
    if (k != k_) {
      return layer_error(node_, "A [{}] has K = {} but B has K = {}", dims_to_string(a.dims), k,
                         k_);
    }
    const TensorView& y = out[0];
    if (y.numel() != m * n_ || y.rank() < 1 || y.dim(y.rank() - 1) != n_) {
      return layer_error(node_, "output is [{}] but A x B is {} x {}", dims_to_string(y.dims), m,
                         n_);
    }
    if (in[kQuantScaleInput].numel() != n_) {
      return layer_error(node_, "{} scales for {} columns", in[kQuantScaleInput].numel(), n_);
    }
    if (const TensorView* c = optional_input(in, kQuantBiasInput); c && c->numel() != n_) {
      return layer_error(node_, "C has {} values for {} columns", c->numel(), n_);
    }
    if (const TensorView* z = optional_input(in, kQuantResidualInput); z && z->numel() != m * n_) {
      return layer_error(node_, "residual is [{}] but the output is [{}]", dims_to_string(z->dims),
                         dims_to_string(y.dims));
    }
    plan_ = kx::plan_qgemm(isa_, m, n_, k, pool_threads(thread_pool()));
    scratch_.resize((kx::qgemm_scratch_bytes(plan_) + 3) / 4, pool_threads(thread_pool()));
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    ref::QuantEpilogue e = epilogue_;
    bind_quant_inputs(e, in);
    const auto* a = static_cast<const uint8_t*>(in[0].data);
    void* y = out[0].data;
    auto body = [&](int64_t slot, int64_t b, int64_t end) {
      kx::qgemm_run(plan_, a, packed_, e, y, reinterpret_cast<uint8_t*>(scratch_.slot(slot)), b,
                    end);
    };
    run_tasks(thread_pool(), plan_.tasks, body);
    return Status::ok();
  }

 private:
  const ir::Node& node_;
  kx::QIsa isa_;
  ref::QuantEpilogue epilogue_;
  int64_t k_ = 0, n_ = 0;
  const uint8_t* packed_ = nullptr;  // into own_ or the engine's prepacked tensor
  Tensor own_;
  kx::QGemmPlan plan_;
  ThreadScratch scratch_;
};

std::string name_of(kx::QIsa isa) {
  if (isa == kx::QIsa::kAvx2Maddubs) return "qgemm.maddubs.u8s8.avx2";
  return isa == kx::QIsa::kAvx512Vnni ? "qgemm.vnni.u8s8.avx512" : "qgemm.u8s8.avx2";
}

class X86QGemmTactic final : public X86QuantTactic {
 public:
  explicit X86QGemmTactic(kx::QIsa isa) : X86QuantTactic(name_of(isa), "kiln", "QGemm", isa) {}

  std::string why_not(const LayerSpec& spec) const override {
    std::string why = quant_why_not(spec);
    if (why.empty() && spec.constant(1)->rank() != 2) {
      why = fmt::format("B is {}, not 2-D", spec.constant(1)->desc());
    }
    if (why.empty() && (!spec.inputs[0].has_rank() || spec.inputs[0].rank() < 2)) {
      why = fmt::format("A is {}: rank >= 2 expected", spec.inputs[0].to_string());
    }
    // An engine that stores only B's dims (packed) was checked when it was built.
    if (why.empty() && qisa() == kx::QIsa::kAvx2Maddubs && spec.constant(1)->raw_data()) {
      const Tensor& b = *spec.constant(1);
      const std::string overflow = kx::qgemm_maddubs_overflow(b.data<int8_t>(), b.dim(0), b.dim(1));
      if (!overflow.empty()) why = "B could saturate: " + overflow;
    }
    return why;
  }

  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    KILN_ASSIGN_OR_RETURN(const ref::QuantEpilogue e, quant_epilogue_of(spec));
    auto kernel = std::make_unique<X86QGemmKernel>(spec, qisa(), e);
    KILN_RETURN_IF_ERROR(kernel->set_weights(spec));
    return std::unique_ptr<LayerKernel>(std::move(kernel));
  }
  std::span<const size_t> packed_inputs() const override { return kPackedWeightsInput; }

  Result<Tensor> prepack(const LayerSpec& spec) const override {
    const Tensor* b = spec.constant(1);
    if (b == nullptr) return Tensor();
    return pack_b(qisa(), *b);
  }
};

}  // namespace

void append_x86_qgemm_tactics(std::vector<const Tactic*>& out) {
  static const X86QGemmTactic vnni(kx::QIsa::kAvx512Vnni);
  static const X86QGemmTactic avx2(kx::QIsa::kAvx2);
  static const X86QGemmTactic maddubs(kx::QIsa::kAvx2Maddubs);
  out.push_back(&vnni);
  out.push_back(&avx2);
  out.push_back(&maddubs);
}

}  // namespace kiln::tactics::x86
