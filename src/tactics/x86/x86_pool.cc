// kiln.MaxPoolNchw16c on kiln's x86 kernels (kernels/x86/kernels.h max_pool_nchw16c): the
// builtin layer kernel (window, rows over the pool) with a block's 16 lanes in AVX-512 or AVX2
// vectors instead of the portable kernel's four 4-float ones.
#include "ops/kiln_fused.h"
#include "ops/kiln_layout.h"
#include "tactics/builtin_pool.h"
#include "tactics/x86/x86_common.h"

namespace kiln::tactics::x86 {
namespace {

class X86BlockedMaxPoolTactic final : public X86Tactic {
 public:
  explicit X86BlockedMaxPoolTactic(kx::Isa isa)
      : X86Tactic("pool.max_nchw16c.f32", ops::kKilnDomain, ops::kMaxPoolNchw16c, isa) {}

  std::string why_not(const LayerSpec& spec) const override {
    return builtin::blocked_max_pool_why_not(spec);
  }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    const kx::Isa isa = this->isa();
    return builtin::make_blocked_max_pool_kernel(
        spec, [isa](const kernels::cpu::Pool2DParams& p, const float* x, float* y, int64_t b,
                    int64_t e) { kx::max_pool_nchw16c(isa, p, x, y, b, e); });
  }
};

}  // namespace

void append_x86_pool_tactics(std::vector<const Tactic*>& out) {
  static const X86BlockedMaxPoolTactic avx512(kx::Isa::kAvx512), avx2(kx::Isa::kAvx2);
  out.insert(out.end(), {&avx512, &avx2});
}

}  // namespace kiln::tactics::x86
