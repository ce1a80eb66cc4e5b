// Resize of the two innermost axes (YOLO's nearest upsampling, DeepLab's bilinear one) with the
// builtin separable kernel, on NCHW or (kiln.ResizeNchw16c) blocked tensors; the interpolation
// taps come from the reference's own tables.
#include <fmt/format.h>

#include <algorithm>

#include "kernels/cpu/resize.h"
#include "kernels/ref/layout.h"
#include "kernels/ref/resize.h"
#include "ops/kiln_layout.h"
#include "ops/resize_params.h"
#include "tactics/builtin.h"
#include "tactics/builtin_util.h"

namespace kiln::tactics::builtin {
namespace {

namespace cpu = kernels::cpu;
namespace ref = kernels::ref;

// The scales / sizes inputs of a Resize node at its version (-1: none).
struct Slots {
  int scales = -1;
  int sizes = -1;
};
Slots slots(int since_version) { return since_version < 11 ? Slots{1, -1} : Slots{2, 3}; }

// The Resize version whose inputs and attributes the node follows: its own, or for
// kiln.ResizeNchw16c the one it keeps as attribute resize_version.
int resize_version(const ir::Node& node, int since_version, bool blocked) {
  return blocked ? ops::resize_nchw16c_version(node.attrs) : since_version;
}

// Whether the spec's constant scales or sizes leave every axis before the last two as it is.
std::string leading_axes_why_not(const LayerSpec& spec, int version) {
  const ir::TensorDesc& x = spec.inputs[0];
  const int rank = x.rank();
  std::vector<int64_t> axes = spec.node->attrs.get_ints("axes");
  if (axes.empty()) {
    for (int d = 0; d < rank; ++d) axes.push_back(d);
  }
  const Slots s = slots(version);
  const Tensor* scales = s.scales >= 0 ? spec.constant(static_cast<size_t>(s.scales)) : nullptr;
  const Tensor* sizes = s.sizes >= 0 ? spec.constant(static_cast<size_t>(s.sizes)) : nullptr;
  if (scales != nullptr && scales->numel() == 0) scales = nullptr;
  if (sizes != nullptr && sizes->numel() == 0) sizes = nullptr;
  if (scales == nullptr && sizes == nullptr) return "neither scales nor sizes is a known constant";
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis >= rank - 2) continue;
    const auto idx = static_cast<int64_t>(i);
    const bool kept = scales != nullptr
                          ? scales->value_as_double(idx) == 1.0
                          : x.dim(static_cast<int>(axis)).is_known() &&
                                sizes->value_as_int(idx) == x.dim(static_cast<int>(axis)).value;
    if (!kept) {
      return fmt::format("axis {} may be resized; only the two innermost axes are handled", axis);
    }
  }
  return "";
}

// A CSR tap table built from the reference's per-coordinate taps; outside coordinates get none.
struct TapTable {
  std::vector<int64_t> start;
  std::vector<int64_t> index;
  std::vector<float> weight;

  void build(const std::vector<ref::ResizeCoord>& coords) {
    start.assign(1, 0);
    index.clear();
    weight.clear();
    for (const ref::ResizeCoord& c : coords) {
      if (!c.outside) {
        for (const ref::ResizeTap& t : c.taps) {
          index.push_back(t.index);
          weight.push_back(static_cast<float>(t.weight));
        }
      }
      start.push_back(static_cast<int64_t>(index.size()));
    }
  }
  cpu::ResizeAxisTaps view() const { return {start.data(), index.data(), weight.data()}; }

  // The taps of `lanes` interleaved copies of the axis (an nChw16c row: pixels of 16 floats):
  // coordinate o's lane l reads lane l of o's input coordinates.
  void interleave(int64_t lanes) {
    const std::vector<int64_t> s = start, idx = index;
    const std::vector<float> w = weight;
    start.assign(1, 0);
    index.clear();
    weight.clear();
    for (size_t o = 0; o + 1 < s.size(); ++o) {
      for (int64_t l = 0; l < lanes; ++l) {
        for (int64_t t = s[o]; t < s[o + 1]; ++t) {
          index.push_back(idx[static_cast<size_t>(t)] * lanes + l);
          weight.push_back(w[static_cast<size_t>(t)]);
        }
        start.push_back(static_cast<int64_t>(index.size()));
      }
    }
  }
};

// Every output coordinate reads the input coordinate of the same index, unweighted.
bool is_identity(const std::vector<ref::ResizeCoord>& coords, int64_t in) {
  if (static_cast<int64_t>(coords.size()) != in) return false;
  for (size_t i = 0; i < coords.size(); ++i) {
    const ref::ResizeCoord& c = coords[i];
    if (c.outside || c.taps.size() != 1 || c.taps[0].index != static_cast<int64_t>(i) ||
        c.taps[0].weight != 1.0) {
      return false;
    }
  }
  return true;
}

// Resize, or (blocked) kiln.ResizeNchw16c: its planes are [H, W] of 16-float pixels, so the
// columns' taps are interleaved 16 times over and each plane holds 16 channels.
class ResizeKernel final : public LayerKernel {
 public:
  ResizeKernel(const LayerSpec& spec, bool blocked)
      : node_(*spec.node),
        version_(resize_version(*spec.node, spec.since_version, blocked)),
        blocked_(blocked) {
    for (const Tensor* t : spec.constants) constant_values_.push_back(t ? *t : Tensor());
    for (const Tensor& t : constant_values_) constants_.push_back(t.defined() ? &t : nullptr);
  }

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    KILN_ASSIGN_OR_RETURN(
        const ref::ResizeParams rp,
        ops::resize_params(ops::NodeContext(node_, version_), dims_of(in[0]), constants_));
    if (!same_dims(out[0], rp.out_dims)) {
      return layer_error(node_, "output is [{}] but the resize gives [{}]",
                         dims_to_string(out[0].dims), dims_to_string(rp.out_dims));
    }
    const size_t rank = rp.in_dims.size();
    p_ = cpu::Resize2DParams{};
    for (size_t d = 0; d + 2 < rank; ++d) {
      if (!is_identity(ref::resize_axis_taps(rp, d), rp.in_dims[d])) {
        return layer_error(node_, "axis {} is resized; only the two innermost axes are handled", d);
      }
      p_.planes *= rp.in_dims[d];
    }
    const size_t w = rank - 1;
    p_.in_w = rp.in_dims[w];
    p_.out_w = rp.out_dims[w];
    cols_.build(ref::resize_axis_taps(rp, w));
    if (rank >= 2) {
      p_.in_h = rp.in_dims[w - 1];
      p_.out_h = rp.out_dims[w - 1];
      rows_.build(ref::resize_axis_taps(rp, w - 1));
    } else {
      rows_.build({ref::ResizeCoord{{{0, 1.0}}, false}});
    }
    if (blocked_) {
      if (rank != 4 || rp.in_dims[1] % kLanes != 0) {
        return layer_error(node_, "X [{}] is not a blocked [N, Cp, H, W] tensor",
                           dims_to_string(in[0].dims));
      }
      p_.planes /= kLanes;
      p_.in_w *= kLanes;
      p_.out_w *= kLanes;
      cols_.interleave(kLanes);
    }
    p_.rows = rows_.view();
    p_.cols = cols_.view();
    p_.cols_gather = cpu::single_unit_taps(p_.cols, p_.out_w);
    p_.columns_first = cpu::resize2d_columns_first(p_);
    p_.extrapolation_value = static_cast<float>(rp.extrapolation_value);
    // Parts of at least ~16K output elements, each with its own scratch (rows, or with the columns
    // first a plane of in_h x out_w: resize2d_scratch_floats).
    const int64_t rows = p_.planes * p_.out_h;
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(p_.out_w, 1));
    const int threads = thread_pool() == nullptr ? 1 : thread_pool()->size();
    parts_ = std::clamp<int64_t>(rows / grain, 1, threads);
    scratch_.resize(cpu::resize2d_scratch_floats(p_) * static_cast<size_t>(parts_));
    return Status::ok();
  }

  // Output rows split into parts_ contiguous parts, each with its own scratch.
  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const float* x = input_f32(in, 0);
    auto* y = static_cast<float*>(out[0].data);
    const int64_t rows = p_.planes * p_.out_h;
    const size_t stride = cpu::resize2d_scratch_floats(p_);
    parallel::parallel_for(thread_pool(), parts_, 1, [&](int64_t b, int64_t e) {
      for (int64_t part = b; part < e; ++part) {
        cpu::resize2d(p_, x, y, scratch_.data() + static_cast<size_t>(part) * stride,
                      rows * part / parts_, rows * (part + 1) / parts_);
      }
    });
    return Status::ok();
  }

 private:
  static constexpr int64_t kLanes = ref::kChannelBlock;

  const ir::Node& node_;
  int version_;  // the Resize version whose inputs and attributes apply
  bool blocked_;
  std::vector<Tensor> constant_values_;   // roi, scales, sizes: copies keep the storage alive
  std::vector<const Tensor*> constants_;  // into constant_values_, nullptr where not constant
  cpu::Resize2DParams p_;
  int64_t parts_ = 1;
  TapTable rows_;
  TapTable cols_;
  FloatBuffer scratch_;
};

class ResizeTactic final : public BuiltinTactic {
 public:
  ResizeTactic(std::string_view name, std::string_view op, bool blocked)
      : BuiltinTactic(name, op), blocked_(blocked) {}
  std::string_view domain() const override { return blocked_ ? ops::kKilnDomain : ""; }
  std::string why_not(const LayerSpec& spec) const override {
    const int version = resize_version(*spec.node, spec.since_version, blocked_);
    std::string why = require_f32(spec, std::array<size_t, 1>{0});
    if (why.empty()) why = blocked_ ? require_rank(spec, 0, 4, 4) : require_rank(spec, 0, 1, 64);
    const char* names[] = {"", "roi", "scales", "sizes"};
    for (size_t i = 1; why.empty() && i < spec.inputs.size() && i < 4; ++i) {
      why = require_constant(spec, i, version < 11 ? "scales" : names[i]);
    }
    if (why.empty() &&
        spec.node->attrs.get_string("keep_aspect_ratio_policy", "stretch") != "stretch") {
      why = "keep_aspect_ratio_policy is not 'stretch'";
    }
    if (why.empty()) why = leading_axes_why_not(spec, version);
    return why;
  }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    return std::unique_ptr<LayerKernel>(new ResizeKernel(spec, blocked_));
  }

 private:
  bool blocked_;
};

}  // namespace

void append_resize_tactics(std::vector<const Tactic*>& out) {
  static const ResizeTactic resize("resize.separable.f32", "Resize", false);
  static const ResizeTactic blocked("resize.separable_nchw16c.f32", ops::kResizeNchw16c, true);
  out.insert(out.end(), {&resize, &blocked});
}

}  // namespace kiln::tactics::builtin
