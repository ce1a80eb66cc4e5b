// LayerNormalization on kiln's x86 kernels (kernels/x86/kernels.h layer_norm_rows): the builtin
// layer kernel (axis, broadcast scale and bias, statistics outputs, rows over the pool) with
// AVX-512 / AVX2 rows instead of the portable loops, which the compiler vectorizes for SSE only.
#include "tactics/builtin_norm.h"
#include "tactics/x86/x86_common.h"

namespace kiln::tactics::x86 {
namespace {

class X86LayerNormTactic final : public X86Tactic {
 public:
  explicit X86LayerNormTactic(kx::Isa isa)
      : X86Tactic("layernorm.f32", "", "LayerNormalization", isa) {}

  std::string why_not(const LayerSpec& spec) const override {
    return builtin::layer_norm_why_not(spec);
  }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    const kx::Isa isa = this->isa();
    return builtin::make_layer_norm_kernel(
        spec, [isa](int64_t rows, int64_t n, const float* x, const float* scale, const float* bias,
                    float epsilon, float* y, float* mean, float* inv_std) {
          kx::layer_norm_rows(isa, rows, n, x, scale, bias, epsilon, y, mean, inv_std);
        });
  }
};

}  // namespace

void append_x86_layernorm_tactics(std::vector<const Tactic*>& out) {
  static const X86LayerNormTactic avx512(kx::Isa::kAvx512), avx2(kx::Isa::kAvx2);
  out.insert(out.end(), {&avx512, &avx2});
}

}  // namespace kiln::tactics::x86
