// Softmax on kiln's x86 kernels (kernels/x86/kernels.h): rows normalised along the contiguous axis
// (a transformer's attention scores), split over the context's pool by rows; along another axis
// (YOLOv8's distribution bins), by positions of the [outer, inner] dims around it.
#include "tactics/builtin_util.h"
#include "tactics/softmax_rows.h"
#include "tactics/x86/x86_common.h"

namespace kiln::tactics::x86 {
namespace {

class X86SoftmaxKernel final : public LayerKernel {
 public:
  X86SoftmaxKernel(const LayerSpec& spec, kx::Isa isa)
      : node_(*spec.node), since_version_(spec.since_version), isa_(isa) {}

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    KILN_ASSIGN_OR_RETURN(shape_, softmax_shape(node_, since_version_, in[0].dims));
    if (!builtin::same_dims(out[0], in[0].dims)) {
      return builtin::layer_error(node_, "output is [{}] but the input is [{}]",
                                  dims_to_string(out[0].dims), dims_to_string(in[0].dims));
    }
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const auto* x = static_cast<const float*>(in[0].data);
    auto* y = static_cast<float*>(out[0].data);
    const int64_t n = shape_.n;
    // Rows (and positions) are independent: split them, at least ~16K elements per chunk.
    if (shape_.inner > 1) {
      const int64_t grain = std::max<int64_t>(16, 16384 / std::max<int64_t>(n, 1));
      parallel::parallel_for(
          thread_pool(), shape_.outer * shape_.inner, grain,
          [&](int64_t b, int64_t e) { kx::softmax_columns(isa_, n, shape_.inner, b, e, x, y); });
      return Status::ok();
    }
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1));
    parallel::parallel_for(thread_pool(), shape_.outer, grain, [&](int64_t b, int64_t e) {
      kx::softmax_rows(isa_, e - b, n, x + b * n, y + b * n);
    });
    return Status::ok();
  }

 private:
  const ir::Node& node_;
  int since_version_;
  kx::Isa isa_;
  kernels::cpu::SoftmaxShape shape_;
};

class X86SoftmaxTactic final : public X86Tactic {
 public:
  explicit X86SoftmaxTactic(kx::Isa isa) : X86Tactic("softmax.f32", "", "Softmax", isa) {}

  std::string why_not(const LayerSpec& spec) const override {
    std::string why = builtin::require_f32(spec);
    if (why.empty()) why = builtin::require_rank(spec, 0, 1, 64);
    return why;
  }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    return std::unique_ptr<LayerKernel>(new X86SoftmaxKernel(spec, isa()));
  }
};

}  // namespace

void append_x86_softmax_tactics(std::vector<const Tactic*>& out) {
  static const X86SoftmaxTactic avx512(kx::Isa::kAvx512), avx2(kx::Isa::kAvx2);
  out.insert(out.end(), {&avx512, &avx2});
}

}  // namespace kiln::tactics::x86
