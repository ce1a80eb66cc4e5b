#include "tactics/x86/x86_common.h"

#include <fmt/format.h>

#include <cstdint>

#include "kernels/ref/activation.h"
#include "tactics/x86/x86_quant.h"

namespace kiln::tactics::x86 {

namespace ref = kernels::ref;

CpuFeatureSet isa_features(kx::Isa isa) { return isa == kx::Isa::kAvx512 ? kIsaAvx512 : kIsaAvx2; }

std::string_view isa_suffix(kx::Isa isa) { return isa == kx::Isa::kAvx512 ? "avx512" : "avx2"; }

std::string activation_why_not(const ir::Node& node, std::string_view prefix) {
  const std::string attr = fmt::format("{}activation", prefix);
  const std::string name = node.attrs.get_string(attr, "");
  if (!name.empty() && !ref::parse_activation(name)) {
    return fmt::format("unknown {} '{}'", attr, name);
  }
  return "";
}

void set_activation(const ir::Node& node, kx::Epilogue& ep, std::string_view prefix) {
  const std::string attr = fmt::format("{}activation", prefix);
  const std::vector<float> p = node.attrs.get_floats(attr + "_params");
  ep.act = ref::parse_activation(node.attrs.get_string(attr, "")).value_or(kx::Act::kNone);
  ep.act_alpha = p.size() > 0 ? p[0] : 0.0f;
  ep.act_beta = p.size() > 1 ? p[1] : 0.0f;
}

Status unpackable_weights(const LayerSpec& spec, size_t needed, std::string_view unit) {
  const Tensor& w = *spec.constant(1);
  const size_t have = spec.prepacked == nullptr ? 0 : static_cast<size_t>(spec.prepacked->numel());
  return corrupt(
      "node '{}' ({}): the engine stores only the dims of input 1 ({}), packed into the layer's "
      "weights, but those hold {} values where this kernel needs {} {}: rebuild the engine",
      spec.node->name, spec.node->op_type, w.desc(), have, needed, unit);
}

void ThreadScratch::resize(size_t floats_per_thread, int threads) {
  stride_ = (floats_per_thread + 15) / 16 * 16;  // whole cache lines per slot
  const size_t want = stride_ * static_cast<size_t>(threads) + 16;
  if (data_.size() != want) data_.assign(want, 0.0f);
  const auto addr = reinterpret_cast<uintptr_t>(data_.data());
  base_ = data_.data() + ((64 - addr % 64) % 64) / sizeof(float);
}

std::span<const Tactic* const> x86_tactics() {
  static const std::vector<const Tactic*> tactics = [] {
    std::vector<const Tactic*> v;
    append_x86_conv_tactics(v);
    append_x86_conv_nchw16c_tactics(v);
    append_x86_conv_winograd_tactics(v);
    append_x86_expand_dw_tactics(v);
    append_x86_gemm_tactics(v);
    append_x86_softmax_tactics(v);
    append_x86_eltwise_tactics(v);
    append_x86_layernorm_tactics(v);
    append_x86_attention_tactics(v);
    append_x86_transpose_tactics(v);
    append_x86_pool_tactics(v);
    append_x86_qconv_tactics(v);
    append_x86_qgemm_tactics(v);
    append_x86_qdq_tactics(v);
    append_x86_qpool_tactics(v);
    append_x86_qconv_nhwc_tactics(v);
    return v;
  }();
  return tactics;
}

}  // namespace kiln::tactics::x86
