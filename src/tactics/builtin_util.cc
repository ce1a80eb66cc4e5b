#include "tactics/builtin_util.h"

#include <fmt/format.h>

#include <limits>
#include <vector>

namespace kiln::tactics::builtin {
namespace {

std::string check_f32(const ir::TensorDesc& d, std::string_view kind, size_t i) {
  if (d.dtype == DType::kUndefined || d.dtype == DType::kF32) return "";
  return fmt::format("{} {} is {}; this tactic runs float32 only", kind, i, dtype_name(d.dtype));
}

// Clip's bound: the attribute `attr` before opset 11, the constant scalar input `input` after;
// `fallback` when absent.
float clip_bound(const LayerSpec& spec, size_t input, const char* attr, float fallback) {
  if (spec.since_version < 11) return spec.node->attrs.get_float(attr, fallback);
  const Tensor* t = spec.constant(input);
  return spec.has_input(input) && t != nullptr ? t->data<float>()[0] : fallback;
}

}  // namespace

std::string require_f32(const LayerSpec& spec) {
  std::vector<size_t> all(spec.inputs.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  return require_f32(spec, all);
}

std::string require_f32(const LayerSpec& spec, std::span<const size_t> inputs) {
  for (size_t i : inputs) {
    if (!spec.has_input(i)) continue;
    std::string why = check_f32(spec.inputs[i], "input", i);
    if (!why.empty()) return why;
  }
  for (size_t i = 0; i < spec.outputs.size(); ++i) {
    std::string why = check_f32(spec.outputs[i], "output", i);
    if (!why.empty()) return why;
  }
  return "";
}

std::string require_same_copyable_dtype(const LayerSpec& spec) {
  if (spec.inputs.empty()) return "the layer has no inputs";
  const DType t = spec.inputs[0].dtype;
  const size_t size = dtype_size(t);
  if (size != 1 && size != 2 && size != 4 && size != 8) {
    return fmt::format("input 0 is {}, which has no fixed-size elements", dtype_name(t));
  }
  for (size_t i = 0; i < spec.outputs.size(); ++i) {
    if (spec.outputs[i].dtype != t && spec.outputs[i].dtype != DType::kUndefined) {
      return fmt::format("output {} is {} but input 0 is {}", i, dtype_name(spec.outputs[i].dtype),
                         dtype_name(t));
    }
  }
  return "";
}

std::string require_rank(const LayerSpec& spec, size_t i, int min_rank, int max_rank) {
  if (!spec.has_input(i) || i >= spec.inputs.size()) return fmt::format("input {} is absent", i);
  const ir::TensorDesc& d = spec.inputs[i];
  if (!d.has_rank()) return fmt::format("input {} has an unknown rank", i);
  if (d.rank() < min_rank || d.rank() > max_rank) {
    return min_rank == max_rank
               ? fmt::format("input {} {} has rank {}; this tactic needs rank {}", i, d.to_string(),
                             d.rank(), min_rank)
               : fmt::format("input {} {} has rank {}; this tactic needs rank {} to {}", i,
                             d.to_string(), d.rank(), min_rank, max_rank);
  }
  return "";
}

std::string require_constant(const LayerSpec& spec, size_t i, std::string_view what) {
  if (!spec.has_input(i)) return "";
  if (spec.constant(i) == nullptr) return fmt::format("input {} ({}) is not a constant", i, what);
  return "";
}

std::pair<float, float> activation_params(const LayerSpec& spec, const ActivationAttrs& attrs,
                                          bool clip) {
  if (clip) {
    return {clip_bound(spec, 1, "min", std::numeric_limits<float>::lowest()),
            clip_bound(spec, 2, "max", std::numeric_limits<float>::max())};
  }
  const ir::Attributes& a = spec.node->attrs;
  return {attrs.alpha ? a.get_float(attrs.alpha, attrs.alpha_default) : attrs.alpha_default,
          attrs.beta ? a.get_float(attrs.beta, attrs.beta_default) : attrs.beta_default};
}

std::string clip_bounds_why_not(const LayerSpec& spec) {
  std::string why = require_constant(spec, 1, "min");
  return why.empty() ? require_constant(spec, 2, "max") : why;
}

}  // namespace kiln::tactics::builtin
