#pragma once
// Helpers shared by the builtin tactics (tactics/builtin_*.cc): the checks their why_not() make,
// view helpers, and scratch storage owned by a kernel object.

#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "base/tensor_view.h"
#include "tactics/tactic.h"

namespace kiln::tactics::builtin {

// A tactic for one op with a fixed name; subclasses add why_not() and instantiate().
class BuiltinTactic : public Tactic {
 public:
  BuiltinTactic(std::string_view name, std::string_view op_type) : name_(name), op_(op_type) {}
  std::string_view name() const override { return name_; }
  std::string_view op_type() const override { return op_; }

 private:
  std::string_view name_;
  std::string_view op_;
};

// "" when every present input and output (all of them, or only `inputs` and outputs) is float32;
// otherwise a reason naming the first one that is not ("input 1 is int64").
std::string require_f32(const LayerSpec& spec);
std::string require_f32(const LayerSpec& spec, std::span<const size_t> inputs);
// "" when every present input and output has `dtype` and movement kernels can copy it.
std::string require_same_copyable_dtype(const LayerSpec& spec);
// "" when input i's rank is known and in [min_rank, max_rank].
std::string require_rank(const LayerSpec& spec, size_t i, int min_rank, int max_rank);
// "" when input i is absent or a known constant.
std::string require_constant(const LayerSpec& spec, size_t i, std::string_view what);

// The float parameters an activation op reads: attributes, with the op's defaults.
struct ActivationAttrs {
  const char* alpha = nullptr;
  float alpha_default = 0.0f;
  const char* beta = nullptr;
  float beta_default = 0.0f;
};
// {alpha, beta} of spec's node as `attrs` names them; for Clip (`clip`), its bounds {min, max}:
// attributes before opset 11, constant scalar inputs 1 and 2 after, unbounded when absent.
std::pair<float, float> activation_params(const LayerSpec& spec, const ActivationAttrs& attrs,
                                          bool clip);
// "" when Clip's bounds are known constants (or absent), else why not.
std::string clip_bounds_why_not(const LayerSpec& spec);

// True when the view's dims are exactly `dims`.
inline bool same_dims(const TensorView& v, std::span<const int64_t> dims) {
  return std::equal(v.dims.begin(), v.dims.end(), dims.begin(), dims.end());
}

// The concrete dims of a view as an owned vector (reshape() only: it allocates).
inline Dims dims_of(const TensorView& v) { return Dims(v.dims.begin(), v.dims.end()); }
// A dims-only Tensor for helpers that read shapes from Tensors (no data).
inline Tensor shape_only(const TensorView& v) {
  return Tensor::borrow(v.dtype, dims_of(v), nullptr, nullptr);
}

// internal_error naming the node, for a reshape() whose views contradict the spec (a bug in the
// caller: shape inference already accepted the layer).
template <typename... Args>
Status layer_error(const ir::Node& node, fmt::format_string<Args...> f, Args&&... args) {
  return internal_error("node '{}' ({}): {}", node.name, node.op_type,
                        fmt::format(f, std::forward<Args>(args)...));
}

// Float storage a kernel owns: sized in reshape() (or instantiate()), used without allocation in
// run().
class FloatBuffer {
 public:
  void resize(size_t n) {
    if (n != data_.size()) data_.assign(n, 0.0f);
  }
  float* data() { return data_.data(); }
  const float* data() const { return data_.data(); }
  size_t size() const { return data_.size(); }

 private:
  std::vector<float> data_;
};

// The float data of input i of a run() (nullptr when the optional input is absent).
inline const float* input_f32(std::span<const TensorView> inputs, size_t i) {
  return i < inputs.size() && inputs[i].dtype != DType::kUndefined
             ? static_cast<const float*>(inputs[i].data)
             : nullptr;
}

// Input i of a run() or reshape() when present; nullptr for i < 0, beyond the end or omitted.
inline const TensorView* optional_input(std::span<const TensorView> inputs, int i) {
  if (i < 0 || static_cast<size_t>(i) >= inputs.size()) return nullptr;
  const TensorView& v = inputs[static_cast<size_t>(i)];
  return v.dtype == DType::kUndefined ? nullptr : &v;
}

}  // namespace kiln::tactics::builtin
