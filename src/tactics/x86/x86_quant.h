#pragma once
// What the x86 INT8 tactics (x86_qconv.cc, x86_qgemm.cc) and the quantize / dequantize tactics
// (x86_qdq.cc) share: a tactic bound to one INT8 ISA, and the node's epilogue in the kernels'
// form.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/cpu_features.h"
#include "kernels/ref/qconv.h"
#include "kernels/x86/qkernels.h"
#include "tactics/tactic.h"

namespace kiln::tactics::x86 {

namespace kx = kernels::x86;

CpuFeatureSet qisa_features(kx::QIsa isa);   // AVX-512 with VNNI (and AMX), or AVX2 + FMA
std::string_view qisa_suffix(kx::QIsa isa);  // "avx512", "amx", "avx2"

// A tactic with a fixed name, op and INT8 ISA; source "kiln".
class X86QuantTactic : public Tactic {
 public:
  X86QuantTactic(std::string name, std::string_view domain, std::string_view op, kx::QIsa isa)
      : name_(std::move(name)), domain_(domain), op_(op), isa_(isa) {}
  std::string_view name() const override { return name_; }
  std::string_view domain() const override { return domain_; }
  std::string_view op_type() const override { return op_; }
  uint64_t required_features() const override { return qisa_features(isa_); }
  kx::QIsa qisa() const { return isa_; }

 private:
  std::string name_;
  std::string_view domain_;
  std::string_view op_;
  kx::QIsa isa_;
};

// What an INT8 convolution kernel's reshape() checks of a run's tensors against its geometry:
// output 0 has the dims `y` the convolution gives, the weight scales and the bias (input 3, when
// present) hold out_c values, the residual (input 4) has Y's dims, and the packed weights hold the
// `needed` bytes the geometry takes (`packed` bytes: what set_weights() found).
Status check_qconv_tensors(const ir::Node& node, std::span<const TensorView> in,
                           const TensorView& out, const Dims& y, int64_t out_c, size_t packed,
                           size_t needed);

// A 1-D uint8 tensor of n bytes, for prepack()'s result.
inline Tensor packed_bytes(size_t n) { return Tensor(DType::kU8, {static_cast<int64_t>(n)}); }

void append_x86_qconv_tactics(std::vector<const Tactic*>& out);       // x86_qconv.cc
void append_x86_qgemm_tactics(std::vector<const Tactic*>& out);       // x86_qgemm.cc
void append_x86_qdq_tactics(std::vector<const Tactic*>& out);         // x86_qdq.cc
void append_x86_qpool_tactics(std::vector<const Tactic*>& out);       // x86_qpool.cc
void append_x86_qconv_nhwc_tactics(std::vector<const Tactic*>& out);  // x86_qconv_nhwc.cc

}  // namespace kiln::tactics::x86
