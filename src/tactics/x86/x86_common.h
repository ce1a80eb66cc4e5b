#pragma once
// What the x86 tactics (x86_conv.cc, x86_gemm.cc) share: the ISA a tactic targets and the CPU
// features that implies, the fused activation as a kernel epilogue, per-thread scratch, and
// spreading a plan's tasks over the context's pool.

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/cpu_features.h"
#include "kernels/x86/kernels.h"
#include "parallel/thread_pool.h"
#include "tactics/tactic.h"

namespace kiln::tactics::x86 {

namespace kx = kernels::x86;

// The features the ISA's translation unit was compiled for: AVX-512 F/BW/VL/DQ (and the AVX2
// level below it), or AVX2 + FMA + F16C.
CpuFeatureSet isa_features(kx::Isa isa);
std::string_view isa_suffix(kx::Isa isa);  // "avx512", "avx2"

// A tactic with a fixed name, op and ISA; source "kiln". Its name is `stem` and the ISA's suffix
// ("conv.nchw16c.f32" -> "conv.nchw16c.f32.avx512"), the one rule every float x86 tactic names by.
class X86Tactic : public Tactic {
 public:
  X86Tactic(std::string_view stem, std::string_view domain, std::string_view op, kx::Isa isa)
      : name_(fmt::format("{}.{}", stem, isa_suffix(isa))), domain_(domain), op_(op), isa_(isa) {}
  std::string_view name() const override { return name_; }
  std::string_view domain() const override { return domain_; }
  std::string_view op_type() const override { return op_; }
  uint64_t required_features() const override { return isa_features(isa_); }
  kx::Isa isa() const { return isa_; }

 private:
  std::string name_;
  std::string_view domain_;
  std::string_view op_;
  kx::Isa isa_;
};

// The node's `activation` / `activation_params` as epilogue fields (Act::kNone when absent).
// "" when the kernels run it, else why not (an unknown name: the op's shape check refuses it too).
// `prefix`: another activation of the node (kiln.ExpandDwNchw16c's "expand_activation").
std::string activation_why_not(const ir::Node& node, std::string_view prefix = "");
void set_activation(const ir::Node& node, kx::Epilogue& ep, std::string_view prefix = "");

// 64-byte aligned float scratch, one slot per thread; sized in reshape(), used in run().
class ThreadScratch {
 public:
  void resize(size_t floats_per_thread, int threads);
  float* slot(int64_t i) { return base_ + static_cast<size_t>(i) * stride_; }

 private:
  std::vector<float> data_;
  float* base_ = nullptr;
  size_t stride_ = 0;
};

inline int pool_threads(parallel::ThreadPool* pool) { return pool == nullptr ? 1 : pool->size(); }

// Runs fn(slot, begin, end) over [0, tasks) split into at most pool_threads() contiguous parts,
// one per thread; slot is the part's index (its scratch slot). Never allocates.
template <typename F>
void run_tasks(parallel::ThreadPool* pool, int64_t tasks, F&& fn) {
  const int64_t parts = std::min<int64_t>(pool_threads(pool), tasks);
  if (parts <= 1) {
    if (tasks > 0) fn(int64_t{0}, int64_t{0}, tasks);
    return;
  }
  auto body = [&](int64_t b, int64_t e) {
    for (int64_t s = b; s < e; ++s) fn(s, s * tasks / parts, (s + 1) * tasks / parts);
  };
  parallel::parallel_for(pool, parts, 1, body);
}

// A zeroed 1-D float32 tensor of n floats, for prepack()'s result.
inline Tensor packed_tensor(size_t n) { return Tensor(DType::kF32, {static_cast<int64_t>(n)}); }

// The engine's prepacked weights when they hold exactly `floats` float32 values, else null (none,
// or another layout's: a plan edited by hand may carry another tactic's).
inline const float* matching_prepacked(const LayerSpec& spec, size_t floats) {
  const Tensor* pre = spec.prepacked;
  if (pre == nullptr || pre->dtype() != DType::kF32 ||
      static_cast<size_t>(pre->numel()) != floats) {
    return nullptr;
  }
  return pre->data<float>();
}

// packed_inputs() of the tactics whose prepack() packs input 1 (the weights, or GEMM's B).
inline constexpr size_t kPackedWeightsInput[] = {1};

// The error for a layer whose engine stored only the dims of input 1 (its values went into the
// packed weights) when the packed tensor is not the `needed` values (`unit`: "floats", "bytes")
// the kernel needs: there is nothing to pack from.
Status unpackable_weights(const LayerSpec& spec, size_t needed, std::string_view unit);

// Where a kernel's packed weights (input 1's) come from: `matched`, the engine's prepacked tensor
// when it holds the `count` elements the kernel needs (matching_prepacked); else pack() into `own`
// from the values; else, the engine having stored only input 1's dims, unpackable_weights().
template <class E, class Pack>
Result<const E*> packed_weights(const LayerSpec& spec, const E* matched, size_t count, Tensor& own,
                                Pack&& pack) {
  if (matched != nullptr) return matched;
  if (spec.constant(1)->raw_data() == nullptr) {
    return unpackable_weights(spec, count, sizeof(E) == 1 ? "bytes" : "floats");
  }
  own = pack();
  return static_cast<const E*>(own.raw_data());
}

void append_x86_conv_tactics(std::vector<const Tactic*>& out);           // x86_conv.cc
void append_x86_conv_nchw16c_tactics(std::vector<const Tactic*>& out);   // x86_conv_nchw16c.cc
void append_x86_conv_winograd_tactics(std::vector<const Tactic*>& out);  // x86_conv_winograd.cc
void append_x86_expand_dw_tactics(std::vector<const Tactic*>& out);      // x86_expand_dw.cc
void append_x86_gemm_tactics(std::vector<const Tactic*>& out);           // x86_gemm.cc
void append_x86_softmax_tactics(std::vector<const Tactic*>& out);        // x86_softmax.cc
void append_x86_eltwise_tactics(std::vector<const Tactic*>& out);        // x86_eltwise.cc
void append_x86_layernorm_tactics(std::vector<const Tactic*>& out);      // x86_layernorm.cc
void append_x86_attention_tactics(std::vector<const Tactic*>& out);      // x86_attention.cc
void append_x86_transpose_tactics(std::vector<const Tactic*>& out);      // x86_transpose.cc
void append_x86_pool_tactics(std::vector<const Tactic*>& out);           // x86_pool.cc

// Every x86 tactic, in preference order (registry.cc puts them before the builtin ones).
std::span<const Tactic* const> x86_tactics();

}  // namespace kiln::tactics::x86
