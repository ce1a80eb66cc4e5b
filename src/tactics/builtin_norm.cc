// Softmax, LayerNormalization and ReduceMean / ReduceSum over one contiguous run of axes, with the
// builtin kernels. Each views its input as [outer, n, inner] in reshape().
#include "tactics/builtin_norm.h"

#include <fmt/format.h>

#include <algorithm>

#include "kernels/cpu/movement.h"
#include "kernels/cpu/norm.h"
#include "kernels/cpu/reduce.h"
#include "kernels/cpu/softmax.h"
#include "ops/shape_util.h"
#include "tactics/builtin.h"
#include "tactics/builtin_util.h"
#include "tactics/softmax_rows.h"

namespace kiln::tactics::builtin {
namespace {

namespace cpu = kernels::cpu;

int64_t product(std::span<const int64_t> d, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= d[i];
  return n;
}

// --- Softmax -------------------------------------------------------------------------------------

class SoftmaxKernel final : public LayerKernel {
 public:
  explicit SoftmaxKernel(const LayerSpec& spec)
      : node_(*spec.node), since_version_(spec.since_version) {}

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    KILN_ASSIGN_OR_RETURN(shape_, softmax_shape(node_, since_version_, in[0].dims));
    if (!same_dims(out[0], in[0].dims)) {
      return layer_error(node_, "output is [{}] but the input is [{}]", dims_to_string(out[0].dims),
                         dims_to_string(in[0].dims));
    }
    scratch_.resize(cpu::softmax_scratch_floats(shape_));
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const float* x = input_f32(in, 0);
    auto* y = static_cast<float*>(out[0].data);
    if (shape_.inner > 1) {  // the scratch holds one outer slice's running max and sum
      cpu::softmax(shape_, x, y, scratch_.data());
      return Status::ok();
    }
    // Rows are independent: split them, at least ~16K elements per chunk.
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(shape_.n, 1));
    parallel::parallel_for(thread_pool(), shape_.outer, grain, [&](int64_t b, int64_t e) {
      cpu::SoftmaxShape part = shape_;
      part.outer = e - b;
      cpu::softmax(part, x + b * shape_.n, y + b * shape_.n, nullptr);
    });
    return Status::ok();
  }

 private:
  const ir::Node& node_;
  int since_version_;
  cpu::SoftmaxShape shape_;
  FloatBuffer scratch_;
};

class SoftmaxTactic final : public BuiltinTactic {
 public:
  SoftmaxTactic() : BuiltinTactic("softmax.f32", "Softmax") {}
  std::string why_not(const LayerSpec& spec) const override {
    std::string why = require_f32(spec);
    if (why.empty()) why = require_rank(spec, 0, 0, 64);
    return why;
  }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    return std::unique_ptr<LayerKernel>(new SoftmaxKernel(spec));
  }
};

// --- LayerNormalization --------------------------------------------------------------------------

// A [inner]-sized parameter: the input itself when it already has inner elements, else broadcast
// into `buf` at run time by a plan made in reshape().
struct LnParam {
  bool broadcast = false;
  cpu::CopyPlan plan;
  FloatBuffer buf;

  Status prepare(const ir::Node& node, const TensorView& p, std::span<const int64_t> inner) {
    broadcast = p.numel() != product(inner, 0, inner.size());
    if (!broadcast) return Status::ok();
    std::vector<int64_t> strides(inner.size(), 0);
    int64_t s = 1;
    for (size_t k = 0; k < static_cast<size_t>(p.rank()); ++k) {
      const size_t pk = static_cast<size_t>(p.rank()) - 1 - k;
      const size_t ik = inner.size() - 1 - k;
      strides[ik] = p.dims[pk] == 1 ? 0 : s;
      s *= p.dims[pk];
    }
    if (!cpu::make_copy_plan(inner, strides, 0, plan)) {
      return layer_error(node, "cannot broadcast [{}] to [{}]", dims_to_string(p.dims),
                         dims_to_string(inner));
    }
    buf.resize(static_cast<size_t>(product(inner, 0, inner.size())));
    return Status::ok();
  }

  const float* get(const float* data) {
    if (!broadcast || data == nullptr) return data;
    cpu::strided_copy(plan, sizeof(float), data, buf.data());
    return buf.data();
  }
};

class LayerNormKernel final : public LayerKernel {
 public:
  LayerNormKernel(const LayerSpec& spec, LayerNormRows rows)
      : node_(*spec.node),
        since_version_(spec.since_version),
        epsilon_(spec.node->attrs.get_float("epsilon", 1e-5f)),
        rows_(std::move(rows)) {}

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    KILN_ASSIGN_OR_RETURN(const int64_t axis,
                          ops::normalize_axis(ops::NodeContext(node_, since_version_),
                                              node_.attrs.get_int("axis", -1), in[0].rank()));
    const auto a = static_cast<size_t>(axis);
    outer_ = product(in[0].dims, 0, a);
    inner_ = product(in[0].dims, a, in[0].dims.size());
    const std::span<const int64_t> inner_dims = in[0].dims.subspan(a);
    KILN_RETURN_IF_ERROR(scale_.prepare(node_, in[1], inner_dims));
    if (const TensorView* b = optional_input(in, 2)) {
      KILN_RETURN_IF_ERROR(bias_.prepare(node_, *b, inner_dims));
    }
    for (size_t i = 1; i < out.size(); ++i) {
      if (out[i].dtype != DType::kUndefined && out[i].numel() != outer_) {
        return layer_error(node_, "output {} is [{}] for {} rows", i, dims_to_string(out[i].dims),
                           outer_);
      }
    }
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const float* scale = scale_.get(input_f32(in, 1));
    const float* bias = bias_.get(input_f32(in, 2));
    auto stat = [&](size_t i) {
      return i < out.size() && out[i].dtype != DType::kUndefined ? static_cast<float*>(out[i].data)
                                                                 : nullptr;
    };
    const float* x = input_f32(in, 0);
    auto* y = static_cast<float*>(out[0].data);
    float* mean = stat(1);
    float* inv_std = stat(2);
    // Rows are independent: split them, at least ~16K elements per chunk.
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(inner_, 1));
    parallel::parallel_for(thread_pool(), outer_, grain, [&](int64_t b, int64_t e) {
      rows_(e - b, inner_, x + b * inner_, scale, bias, epsilon_, y + b * inner_,
            mean ? mean + b : nullptr, inv_std ? inv_std + b : nullptr);
    });
    return Status::ok();
  }

 private:
  const ir::Node& node_;
  int since_version_;
  float epsilon_;
  LayerNormRows rows_;
  int64_t outer_ = 0;
  int64_t inner_ = 0;
  LnParam scale_;
  LnParam bias_;
};

class LayerNormTactic final : public BuiltinTactic {
 public:
  LayerNormTactic() : BuiltinTactic("layernorm.f32", "LayerNormalization") {}
  std::string why_not(const LayerSpec& spec) const override { return layer_norm_why_not(spec); }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    return make_layer_norm_kernel(spec, cpu::layer_norm);
  }
};

// --- ReduceMean, ReduceSum -----------------------------------------------------------------------

// The reduced axes [first, last) of a rank-`rank` input, or a reason why they are not one
// contiguous run known from the spec.
struct AxisRun {
  int64_t first = 0;
  int64_t last = 0;
  std::string why_not;
};

AxisRun reduced_run(const LayerSpec& spec, int axes_input_since, int64_t rank) {
  const ir::Attributes& attrs = spec.node->attrs;
  std::vector<int64_t> axes;
  if (spec.since_version >= axes_input_since) {
    if (spec.has_input(1)) {
      const Tensor* t = spec.constant(1);
      if (t == nullptr) return {0, 0, "input 1 (axes) is not a constant"};
      axes = t->to_int64_vector();
    }
  } else {
    axes = attrs.get_ints("axes");
  }
  if (axes.empty()) {
    if (attrs.get_int("noop_with_empty_axes", 0) != 0) return {rank, rank, ""};  // identity
    return {0, rank, ""};
  }
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) return {0, 0, fmt::format("axis {} is out of range", a)};
    if (a < 0) a += rank;
  }
  std::sort(axes.begin(), axes.end());
  for (size_t i = 1; i < axes.size(); ++i) {
    if (axes[i] != axes[i - 1] + 1) {
      return {0, 0, fmt::format("axes [{}] are not one contiguous run", fmt::join(axes, ", "))};
    }
  }
  return {axes.front(), axes.back() + 1, ""};
}

class ReduceKernel final : public LayerKernel {
 public:
  ReduceKernel(const ir::Node& node, bool mean, AxisRun run)
      : node_(node), mean_(mean), run_(run) {}

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const std::span<const int64_t> d = in[0].dims;
    const auto first = static_cast<size_t>(run_.first);
    const auto last = static_cast<size_t>(run_.last);
    shape_ =
        cpu::ReduceShape{product(d, 0, first), product(d, first, last), product(d, last, d.size())};
    if (out[0].numel() != shape_.outer * shape_.inner) {
      return layer_error(node_, "output is [{}] for input [{}]", dims_to_string(out[0].dims),
                         dims_to_string(d));
    }
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    cpu::reduce_sum(shape_, mean_, input_f32(in, 0), static_cast<float*>(out[0].data));
    return Status::ok();
  }

 private:
  const ir::Node& node_;
  bool mean_;
  AxisRun run_;
  cpu::ReduceShape shape_;
};

class ReduceTactic final : public BuiltinTactic {
 public:
  ReduceTactic(std::string_view name, std::string_view op, bool mean, int axes_input_since)
      : BuiltinTactic(name, op), mean_(mean), axes_input_since_(axes_input_since) {}

  std::string why_not(const LayerSpec& spec) const override {
    std::string why = require_f32(spec, std::array<size_t, 1>{0});
    if (why.empty()) why = require_rank(spec, 0, 0, 64);
    if (why.empty()) why = reduced_run(spec, axes_input_since_, spec.inputs[0].rank()).why_not;
    return why;
  }

  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    const AxisRun run = reduced_run(spec, axes_input_since_, spec.inputs[0].rank());
    return std::unique_ptr<LayerKernel>(new ReduceKernel(*spec.node, mean_, run));
  }

 private:
  bool mean_;
  int axes_input_since_;
};

}  // namespace

std::string layer_norm_why_not(const LayerSpec& spec) {
  std::string why = require_f32(spec);
  if (why.empty()) why = require_rank(spec, 0, 1, 64);
  if (why.empty() && spec.node->attrs.get_int("stash_type", 1) != 1) {
    why = "stash_type is not 1 (float32)";
  }
  return why;
}

std::unique_ptr<LayerKernel> make_layer_norm_kernel(const LayerSpec& spec, LayerNormRows rows) {
  return std::make_unique<LayerNormKernel>(spec, std::move(rows));
}

void append_norm_tactics(std::vector<const Tactic*>& out) {
  static const SoftmaxTactic softmax;
  static const LayerNormTactic layer_norm;
  static const ReduceTactic reduce_mean("reduce.mean.f32", "ReduceMean", true, 18);
  static const ReduceTactic reduce_sum("reduce.sum.f32", "ReduceSum", false, 13);
  out.insert(out.end(), {&softmax, &layer_norm, &reduce_mean, &reduce_sum});
}

}  // namespace kiln::tactics::builtin
