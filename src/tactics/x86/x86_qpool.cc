// MaxPool of a uint8 tensor (quant/maxpool_hoist.h puts it on the INT8 side) with the AVX-512
// kernel of kernels/x86/qkernels.h; a window it does not take (stride_w above 2, a row too wide
// for its buffer) runs the portable kernel, as pool.max.u8 does.
#include "base/int_math.h"
#include "kernels/cpu/pool.h"
#include "ops/kiln_fused.h"
#include "ops/kiln_layout.h"
#include "ops/nhwc.h"
#include "parallel/thread_pool.h"
#include "tactics/builtin_pool.h"
#include "tactics/builtin_util.h"
#include "tactics/x86/x86_quant.h"

namespace kiln::tactics::x86 {
namespace {

namespace cpu = kernels::cpu;

class QMaxPoolKernel final : public LayerKernel {
 public:
  QMaxPoolKernel(const LayerSpec& spec, kx::QIsa isa)
      : node_(*spec.node), since_version_(spec.since_version), isa_(isa) {}

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    KILN_ASSIGN_OR_RETURN(p_, builtin::pool_params(node_, since_version_, in[0], out[0]));
    fast_ = kx::qmax_pool_applies(p_);
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const auto* x = static_cast<const uint8_t*>(in[0].data);
    auto* y = static_cast<uint8_t*>(out[0].data);
    const int64_t grain = builtin::pool_row_grain(p_);
    parallel::parallel_for(thread_pool(), cpu::pool2d_rows(p_), grain, [&](int64_t b, int64_t e) {
      if (fast_) {
        kx::qmax_pool_run(isa_, p_, x, y, b, e);
      } else {
        cpu::max_pool2d(p_, x, y, b, e);
      }
    });
    return Status::ok();
  }

 private:
  const ir::Node& node_;
  int since_version_;
  kx::QIsa isa_;
  cpu::Pool2DParams p_;
  bool fast_ = false;
};

class QMaxPoolTactic final : public X86QuantTactic {
 public:
  QMaxPoolTactic() : X86QuantTactic("pool.max.u8.avx512", "", "MaxPool", kx::QIsa::kAvx512Vnni) {}

  std::string why_not(const LayerSpec& spec) const override {
    return builtin::pool_why_not(spec, DType::kU8);
  }

  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    return std::unique_ptr<LayerKernel>(new QMaxPoolKernel(spec, qisa()));
  }
};

// kiln.MaxPoolNhwc (passes/qconv_nhwc.h): the window as MaxPool's, read on NCHW-ordered views
// of the channels-last dims; every (image, output row) is a task.
class QMaxPoolNhwcKernel final : public LayerKernel {
 public:
  QMaxPoolNhwcKernel(const LayerSpec& spec, kx::QIsa isa) : node_(*spec.node), isa_(isa) {}

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const auto nchw = [](const TensorView& v) {
      return ops::permuted(Dims(v.dims.begin(), v.dims.end()), ops::kNhwcToNchw);
    };
    const Dims x = nchw(in[0]), y = nchw(out[0]);
    KILN_ASSIGN_OR_RETURN(p_, builtin::pool_params(node_, kMaxPoolAttrsVersion,
                                                   TensorView{in[0].dtype, x, in[0].data},
                                                   TensorView{out[0].dtype, y, out[0].data}));
    p_.planes = x[0];
    channels_ = x[1];
    const int64_t row_work = p_.out_w * p_.k_h * p_.k_w * ceil_div(channels_, int64_t{64});
    grain_ = std::max<int64_t>(1, 8192 / std::max<int64_t>(1, row_work));
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const auto* x = static_cast<const uint8_t*>(in[0].data);
    auto* y = static_cast<uint8_t*>(out[0].data);
    parallel::parallel_for(thread_pool(), p_.planes * p_.out_h, grain_, [&](int64_t b, int64_t e) {
      kx::qmax_pool_nhwc_run(isa_, p_, channels_, x, y, b, e);
    });
    return Status::ok();
  }

 private:
  // kiln.MaxPoolNhwc has MaxPool's opset-12 attributes (ceil_mode, dilations).
  static constexpr int kMaxPoolAttrsVersion = 12;
  const ir::Node& node_;
  kx::QIsa isa_;
  cpu::Pool2DParams p_;
  int64_t channels_ = 0;
  int64_t grain_ = 1;  // output rows a thread takes at least (about 8K window loads)
};

class QMaxPoolNhwcTactic final : public X86QuantTactic {
 public:
  QMaxPoolNhwcTactic()
      : X86QuantTactic("pool.max_nhwc.u8.avx512", ops::kKilnDomain, ops::kMaxPoolNhwc,
                       kx::QIsa::kAvx512Vnni) {}

  std::string why_not(const LayerSpec& spec) const override {
    std::string why = builtin::pool_why_not(spec, DType::kU8);
    return why.empty() ? builtin::require_rank(spec, 0, 4, 4) : why;
  }

  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    return std::unique_ptr<LayerKernel>(new QMaxPoolNhwcKernel(spec, qisa()));
  }
};

}  // namespace

void append_x86_qpool_tactics(std::vector<const Tactic*>& out) {
  static const QMaxPoolTactic max_pool;
  static const QMaxPoolNhwcTactic max_pool_nhwc;
  out.push_back(&max_pool);
  out.push_back(&max_pool_nhwc);
}

}  // namespace kiln::tactics::x86
