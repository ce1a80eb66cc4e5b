// Data movement with the builtin kernels, for any dtype of 1, 2, 4 or 8 bytes: Concat, Split,
// Transpose, Slice with constant parameters, Expand, kiln.Patches, Gather (constant or run-time
// indices), and the ops whose output is their input's data under other dims (Reshape, Flatten,
// Squeeze, Unsqueeze, Identity), which the engine gives a buffer of their own.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "kernels/cpu/movement.h"
#include "kernels/ref/movement.h"
#include "ops/kiln_fused.h"
#include "ops/shape_util.h"
#include "ops/slice_window.h"
#include "tactics/builtin.h"
#include "tactics/builtin_util.h"

namespace kiln::tactics::builtin {
namespace {

namespace cpu = kernels::cpu;

std::vector<int64_t> row_major_strides(std::span<const int64_t> dims) {
  std::vector<int64_t> s(dims.size());
  int64_t v = 1;
  for (size_t k = dims.size(); k-- > 0;) {
    s[k] = v;
    v *= dims[k];
  }
  return s;
}

// Outer-axis indices of `row` elements each that make a thread's part of a split copy at least
// 16K elements (64 KiB of floats, a few microseconds against about one to start the pool's
// threads).
int64_t part_grain(int64_t row) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(row, 1)); }

// The outer-axis indices a thread's part of a copy takes at least; 0: the copy stays on one
// thread. A copy that keeps the input's axis order (a slice, a broadcast) reads, part by part,
// what a producer split along the same outer axis wrote on the same core (parts of part_grain).
// A transpose reads across both cores' caches when split: ViT-Tiny's attention transposes took up
// to twice as long split as on one core.
int64_t split_grain(const cpu::CopyPlan& p, int64_t row) {
  int64_t outer = INT64_MAX;  // the last read stride, broadcast axes (stride 0) aside
  for (int k = 0; k < p.rank; ++k) {
    const int64_t s = std::abs(p.strides[k]);
    if (s == 0) continue;
    if (s > outer) return 0;
    outer = s;
  }
  return part_grain(row);
}

std::string copyable_why_not(const LayerSpec& spec) {
  std::string why = require_same_copyable_dtype(spec);
  if (why.empty()) why = require_rank(spec, 0, 0, 64);
  return why;
}

// --- Reshape, Flatten, Squeeze, Unsqueeze, Identity ----------------------------------------------

class CopyKernel final : public LayerKernel {
 public:
  explicit CopyKernel(const ir::Node& node) : node_(node) {}

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    if (out[0].numel() != in[0].numel() || out[0].dtype != in[0].dtype) {
      return layer_error(node_, "output {}[{}] does not hold input {}[{}]",
                         dtype_name(out[0].dtype), dims_to_string(out[0].dims),
                         dtype_name(in[0].dtype), dims_to_string(in[0].dims));
    }
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    if (out[0].data != in[0].data && in[0].nbytes() > 0) {
      std::memcpy(out[0].data, in[0].data, in[0].nbytes());
    }
    return Status::ok();
  }

 private:
  const ir::Node& node_;
};

class CopyTactic final : public BuiltinTactic {
 public:
  using BuiltinTactic::BuiltinTactic;
  bool output_is_input() const override { return true; }
  std::string why_not(const LayerSpec& spec) const override {
    return require_same_copyable_dtype(spec);
  }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    return std::unique_ptr<LayerKernel>(new CopyKernel(*spec.node));
  }
};

// --- Transpose, Slice, Expand, kiln.Patches: strided copies
// --------------------------------------------------------------

class StridedKernel final : public LayerKernel {
 public:
  explicit StridedKernel(const LayerSpec& spec)
      : node_(*spec.node), since_version_(spec.since_version) {
    // Slice's starts/ends/axes/steps: copies share the storage and keep it alive.
    for (const Tensor* t : spec.constants) constant_values_.push_back(t ? *t : Tensor());
    for (const Tensor& t : constant_values_) constants_.push_back(t.defined() ? &t : nullptr);
  }

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const std::vector<int64_t> strides = row_major_strides(in[0].dims);
    Dims dims;
    std::vector<int64_t> view_strides;
    int64_t offset = 0;
    Dims out_dims;  // the output's dims when they are not the view's (Patches)
    if (node_.op_type == "Expand") {
      KILN_RETURN_IF_ERROR(broadcast_view(in[0], out[0], strides, dims, view_strides));
    } else if (node_.op_type == ops::kPatches) {
      KILN_RETURN_IF_ERROR(patches_view(in[0], strides, dims, view_strides, out_dims));
    } else if (node_.op_type == "Transpose") {
      KILN_ASSIGN_OR_RETURN(const std::vector<int64_t> perm, permutation(in[0].rank()));
      for (int64_t p : perm) {
        dims.push_back(in[0].dim(static_cast<int>(p)));
        view_strides.push_back(strides[static_cast<size_t>(p)]);
      }
    } else {
      const ops::NodeContext ctx(node_, since_version_);
      KILN_ASSIGN_OR_RETURN(const ops::SliceWindow w,
                            ops::slice_window(ctx, dims_of(in[0]), constants_));
      dims = w.counts;
      for (size_t k = 0; k < strides.size(); ++k) {
        offset += w.starts[k] * strides[k];
        view_strides.push_back(w.steps[k] * strides[k]);
      }
    }
    if (out_dims.empty()) out_dims = dims;
    if (!same_dims(out[0], out_dims)) {
      return layer_error(node_, "output is [{}] but the input gives [{}]",
                         dims_to_string(out[0].dims), dims_to_string(out_dims));
    }
    if (!cpu::make_copy_plan(dims, view_strides, offset, plan_)) {
      return layer_error(node_, "the copy of [{}] needs more than {} axes",
                         dims_to_string(in[0].dims), cpu::kMaxCopyRank);
    }
    elem_size_ = dtype_size(in[0].dtype);
    row_ = cpu::outer_row_elements(plan_);
    // Patches read X (an input image, from memory) one band of kh rows per output row of patches:
    // split, each thread reads its own band.
    grain_ = node_.op_type == ops::kPatches ? part_grain(row_) : split_grain(plan_, row_);
    return Status::ok();
  }

  // Split over the pool along the outermost axis when that keeps each thread near its data (see
  // split_grain): on one thread of two, ViT-Tiny's slices of its 2-thread GEMM's output ran 150 us
  // in all against 85 split.
  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    auto* y = static_cast<unsigned char*>(out[0].data);
    if (grain_ == 0) {
      cpu::strided_copy(plan_, elem_size_, in[0].data, y);
      return Status::ok();
    }
    parallel::parallel_for(thread_pool(), plan_.dims[0], grain_, [&](int64_t b, int64_t e) {
      cpu::strided_copy(cpu::outer_slice(plan_, b, e), elem_size_, in[0].data,
                        y + static_cast<size_t>(b * row_) * elem_size_);
    });
    return Status::ok();
  }

 private:
  // Patches' output, [N, OH * OW, C * kh * kw], is X [N, C, H, W] viewed as [N, OH, OW, C, kh, kw].
  Status patches_view(const TensorView& x, const std::vector<int64_t>& strides, Dims& dims,
                      std::vector<int64_t>& view_strides, Dims& out_dims) const {
    const std::vector<int64_t> k = node_.attrs.get_ints("kernel_shape");
    if (x.rank() != 4 || k.size() != 2 || k[0] <= 0 || k[1] <= 0 || x.dim(2) % k[0] != 0 ||
        x.dim(3) % k[1] != 0) {
      return layer_error(node_, "X [{}] does not cut into patches of kernel_shape [{}]",
                         dims_to_string(x.dims), fmt::join(k, ","));
    }
    const int64_t oh = x.dim(2) / k[0], ow = x.dim(3) / k[1];
    dims = {x.dim(0), oh, ow, x.dim(1), k[0], k[1]};
    view_strides = {strides[0], k[0] * strides[2], k[1], strides[1], strides[2], 1};
    out_dims = {x.dim(0), oh * ow, x.dim(1) * k[0] * k[1]};
    return Status::ok();
  }

  // Expand's output reads X with stride 0 along the axes it broadcasts (X's dims of 1, and the
  // leading axes X lacks); the output's dims come from the engine's shape inference.
  Status broadcast_view(const TensorView& x, const TensorView& y,
                        const std::vector<int64_t>& strides, Dims& dims,
                        std::vector<int64_t>& view_strides) const {
    const int lead = y.rank() - x.rank();
    bool ok = lead >= 0;
    for (int k = 0; ok && k < y.rank(); ++k) {
      const int j = k - lead;
      const int64_t xd = j < 0 ? 1 : x.dims[static_cast<size_t>(j)];
      ok = xd == y.dims[static_cast<size_t>(k)] || xd == 1;
      dims.push_back(y.dims[static_cast<size_t>(k)]);
      view_strides.push_back(j < 0 || xd == 1 ? 0 : strides[static_cast<size_t>(j)]);
    }
    if (!ok) {
      return layer_error(node_, "input [{}] does not broadcast to the output [{}]",
                         dims_to_string(x.dims), dims_to_string(y.dims));
    }
    return Status::ok();
  }

  Result<std::vector<int64_t>> permutation(int rank) const {
    std::vector<int64_t> perm = node_.attrs.get_ints("perm");
    if (perm.empty()) {
      for (int k = rank - 1; k >= 0; --k) perm.push_back(k);
    }
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    bool ok = static_cast<int>(perm.size()) == rank;
    for (size_t k = 0; ok && k < perm.size(); ++k) {
      ok = perm[k] >= 0 && perm[k] < rank && !seen[static_cast<size_t>(perm[k])];
      if (ok) seen[static_cast<size_t>(perm[k])] = true;
    }
    if (!ok) return layer_error(node_, "perm [{}] is not a permutation", fmt::join(perm, ", "));
    return perm;
  }

  const ir::Node& node_;
  int since_version_;
  std::vector<Tensor> constant_values_;
  std::vector<const Tensor*> constants_;  // into constant_values_, nullptr where not constant
  cpu::CopyPlan plan_;
  size_t elem_size_ = 0;
  int64_t row_ = 0;    // output elements one index of the plan's outermost axis covers
  int64_t grain_ = 0;  // outermost indices a thread takes at least; 0: one thread
};

class TransposeTactic final : public BuiltinTactic {
 public:
  TransposeTactic() : BuiltinTactic("transpose.strided", "Transpose") {}
  std::string why_not(const LayerSpec& spec) const override {
    std::string why = require_same_copyable_dtype(spec);
    if (why.empty()) why = require_rank(spec, 0, 0, cpu::kMaxCopyRank);
    return why;
  }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    return std::unique_ptr<LayerKernel>(new StridedKernel(spec));
  }
};

// Only the data input decides the element type (Slice's starts/ends/axes/steps and Expand's shape
// are integers).
std::string fixed_size_data_why_not(const LayerSpec& spec) {
  if (const size_t size = dtype_size(spec.inputs[0].dtype);
      size != 1 && size != 2 && size != 4 && size != 8) {
    return fmt::format("input 0 is {}, which has no fixed-size elements",
                       dtype_name(spec.inputs[0].dtype));
  }
  return "";
}

// kiln.Patches (ops/kiln_fused.h): the strided copy of X viewed as [N, OH, OW, C, kh, kw].
class PatchesTactic final : public BuiltinTactic {
 public:
  PatchesTactic() : BuiltinTactic("patches.strided", ops::kPatches) {}
  std::string_view domain() const override { return ops::kKilnDomain; }
  std::string why_not(const LayerSpec& spec) const override {
    std::string why = require_same_copyable_dtype(spec);
    if (why.empty()) why = require_rank(spec, 0, 4, 4);
    return why;
  }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    return std::unique_ptr<LayerKernel>(new StridedKernel(spec));
  }
};

class ExpandTactic final : public BuiltinTactic {
 public:
  ExpandTactic() : BuiltinTactic("expand.strided", "Expand") {}
  std::string why_not(const LayerSpec& spec) const override {
    std::string why = require_rank(spec, 0, 0, cpu::kMaxCopyRank);
    if (why.empty()) why = fixed_size_data_why_not(spec);
    return why;
  }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    return std::unique_ptr<LayerKernel>(new StridedKernel(spec));
  }
};

class SliceTactic final : public BuiltinTactic {
 public:
  SliceTactic() : BuiltinTactic("slice.strided", "Slice") {}
  std::string why_not(const LayerSpec& spec) const override {
    std::string why = require_rank(spec, 0, 0, cpu::kMaxCopyRank);
    if (why.empty()) why = fixed_size_data_why_not(spec);
    if (!why.empty()) return why;
    const char* names[] = {"starts", "ends", "axes", "steps"};
    for (size_t i = 1; i <= 4; ++i) {
      if (why.empty()) why = require_constant(spec, i, names[i - 1]);
    }
    return why;
  }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    return std::unique_ptr<LayerKernel>(new StridedKernel(spec));
  }
};

// --- Gather: constant indices (a transformer's class token, x[:, 0]) or indices given at run time
// (an embedding lookup of token ids) ------------------------------------------------------------

// An int32 or int64 index tensor as a view of int64s.
struct IndexView {
  const void* data;
  DType dtype;
  int64_t n;
  int64_t operator[](int64_t i) const {
    return dtype == DType::kI64 ? static_cast<const int64_t*>(data)[i]
                                : static_cast<const int32_t*>(data)[i];
  }
};

class GatherKernel final : public LayerKernel {
 public:
  // `constant`: the indices' values as the model wrote them, laid out as index_dims; nullopt when
  // they arrive as an input on each run.
  GatherKernel(const LayerSpec& spec, std::optional<std::vector<int64_t>> constant, Dims index_dims)
      : node_(*spec.node),
        since_version_(spec.since_version),
        constant_(std::move(constant)),
        index_dims_(std::move(index_dims)) {}

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    if (in[0].rank() == 0) return layer_error(node_, "cannot gather from a scalar");
    KILN_ASSIGN_OR_RETURN(const int64_t axis,
                          ops::normalize_axis(ops::NodeContext(node_, since_version_),
                                              node_.attrs.get_int("axis", 0), in[0].rank()));
    const auto a = static_cast<size_t>(axis);
    axis_ = axis;
    axis_dim_ = in[0].dims[a];
    if (!constant_) index_dims_.assign(in[1].dims.begin(), in[1].dims.end());
    Dims want(in[0].dims.begin(), in[0].dims.begin() + axis);
    want.insert(want.end(), index_dims_.begin(), index_dims_.end());
    want.insert(want.end(), in[0].dims.begin() + axis + 1, in[0].dims.end());
    if (!same_dims(out[0], want)) {
      return layer_error(node_, "output is [{}] but the gather gives [{}]",
                         dims_to_string(out[0].dims), dims_to_string(want));
    }
    outer_ = dims_numel(in[0].dims.first(a));
    inner_ = dims_numel(in[0].dims.subspan(a + 1));
    elem_size_ = dtype_size(in[0].dtype);
    data_dims_.assign(in[0].dims.begin(), in[0].dims.end());
    if (constant_) return normalize(IndexView{constant_->data(), DType::kI64, ssize(*constant_)});
    normalized_.reserve(static_cast<size_t>(in[1].numel()));  // run() does not allocate
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    if (!constant_) {
      KILN_RETURN_IF_ERROR(normalize(IndexView{in[1].data, in[1].dtype, in[1].numel()}));
    }
    kernels::ref::gather(in[0].data, elem_size_, outer_, axis_dim_, inner_, normalized_,
                         out[0].data);
    return Status::ok();
  }

 private:
  // Every index in [-axis_dim, axis_dim), counted from the start of the axis into normalized_.
  Status normalize(const IndexView& indices) {
    normalized_.clear();
    for (int64_t k = 0; k < indices.n; ++k) {
      const int64_t i = indices[k];
      if (i < -axis_dim_ || i >= axis_dim_) {
        return layer_error(node_,
                           "index {} is out of range for axis {} of data [{}] (valid: [{}, {}])", i,
                           axis_, dims_to_string(data_dims_), -axis_dim_, axis_dim_ - 1);
      }
      normalized_.push_back(i < 0 ? i + axis_dim_ : i);
    }
    return Status::ok();
  }

  const ir::Node& node_;
  int since_version_;
  std::optional<std::vector<int64_t>> constant_;
  Dims index_dims_;
  std::vector<int64_t> normalized_;
  Dims data_dims_;
  int64_t axis_ = 0, outer_ = 0, axis_dim_ = 0, inner_ = 0;
  size_t elem_size_ = 0;
};

class GatherTactic final : public BuiltinTactic {
 public:
  // constant_indices: "gather.constant_indices" (indices known when the engine is built), else
  // "gather.indices" (read on every run).
  explicit GatherTactic(bool constant_indices)
      : BuiltinTactic(constant_indices ? "gather.constant_indices" : "gather.indices", "Gather"),
        constant_indices_(constant_indices) {}
  std::string why_not(const LayerSpec& spec) const override {
    std::string why = require_rank(spec, 0, 1, 64);
    if (why.empty()) why = fixed_size_data_why_not(spec);
    if (why.empty() && constant_indices_) why = require_constant(spec, 1, "indices");
    if (why.empty() && !constant_indices_ && spec.constant(1) != nullptr) {
      why = "the indices are a constant: gather.constant_indices checks them once";
    }
    if (why.empty() && spec.outputs[0].dtype != spec.inputs[0].dtype) {
      why = "the output's dtype is not the data's";
    }
    if (const DType t = spec.inputs[1].dtype; why.empty() && t != DType::kI64 && t != DType::kI32) {
      why = fmt::format("indices are {}, not int32 or int64", dtype_name(t));
    }
    return why;
  }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    if (!constant_indices_) {
      return std::unique_ptr<LayerKernel>(new GatherKernel(spec, std::nullopt, {}));
    }
    const Tensor& idx = *spec.constant(1);
    return std::unique_ptr<LayerKernel>(new GatherKernel(spec, idx.to_int64_vector(), idx.dims()));
  }

 private:
  bool constant_indices_;
};

// --- Concat and Split: copies between one tensor and its parts along an axis ---------------------

// The elements of `v` from `axis` on: what one outer index of an [outer, axis, inner] view holds.
int64_t chunk_of(const TensorView& v, size_t axis) {
  int64_t chunk = 1;
  for (size_t k = axis; k < v.dims.size(); ++k) chunk *= v.dims[k];
  return chunk;
}

// What Concat's and Split's kernels share: the node, the axis, and the plan of the copy between
// the whole and its parts (the parts' chunks, the whole's element count, the element size).
class PartsKernel : public LayerKernel {
 public:
  PartsKernel(const ir::Node& node, int since_version)
      : node_(node), since_version_(since_version) {}

 protected:
  Result<size_t> axis(int rank) const {
    KILN_ASSIGN_OR_RETURN(const int64_t axis,
                          ops::normalize_axis(ops::NodeContext(node_, since_version_),
                                              node_.attrs.get_int("axis", 0), rank));
    return static_cast<size_t>(axis);
  }

  const ir::Node& node_;
  int since_version_;
  std::vector<int64_t> chunks_;
  int64_t total_ = 0;
  size_t elem_size_ = 0;
};

class ConcatKernel final : public PartsKernel {
 public:
  using PartsKernel::PartsKernel;

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const int rank = in[0].rank();
    KILN_ASSIGN_OR_RETURN(const size_t a, axis(rank));
    Dims want = dims_of(in[0]);
    want[a] = 0;
    chunks_.clear();
    for (const TensorView& v : in) {
      chunks_.push_back(chunk_of(v, a));
      want[a] += v.rank() == rank ? v.dims[a] : 0;
    }
    if (!same_dims(out[0], want)) {
      return layer_error(node_, "output is [{}] but the inputs concatenate to [{}]",
                         dims_to_string(out[0].dims), dims_to_string(want));
    }
    total_ = out[0].numel();
    ins_.assign(in.size(), nullptr);
    elem_size_ = dtype_size(in[0].dtype);
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    for (size_t i = 0; i < in.size(); ++i) ins_[i] = in[i].data;
    // Even shares of the whole, at least 64 KiB of floats (part_grain) a thread.
    parallel::parallel_for(thread_pool(), total_, part_grain(1), [&](int64_t b, int64_t e) {
      cpu::concat_range(ins_, chunks_, elem_size_, out[0].data, b, e);
    });
    return Status::ok();
  }

 private:
  std::vector<const void*> ins_;  // sized in reshape(), filled per run
};

class ConcatTactic final : public BuiltinTactic {
 public:
  ConcatTactic() : BuiltinTactic("concat.copy", "Concat") {}
  std::string why_not(const LayerSpec& spec) const override { return copyable_why_not(spec); }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    return std::unique_ptr<LayerKernel>(new ConcatKernel(*spec.node, spec.since_version));
  }
};

// Split's outputs come from the engine's shape inference, which checked them against `split` (or
// num_outputs): the kernel checks only that they tile the input along the axis.
class SplitKernel final : public PartsKernel {
 public:
  using PartsKernel::PartsKernel;

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const int rank = in[0].rank();
    KILN_ASSIGN_OR_RETURN(const size_t a, axis(rank));
    chunks_.clear();
    int64_t along = 0;
    for (const TensorView& v : out) {
      Dims want = dims_of(in[0]);
      want[a] = v.rank() == rank ? v.dims[a] : -1;
      if (!same_dims(v, want)) {
        return layer_error(node_, "output [{}] is not a part of the input [{}] along axis {}",
                           dims_to_string(v.dims), dims_to_string(in[0].dims), a);
      }
      chunks_.push_back(chunk_of(v, a));
      along += v.dims[a];
    }
    if (along != in[0].dims[a]) {
      return layer_error(node_, "the outputs take {} of the input [{}]'s {} along axis {}", along,
                         dims_to_string(in[0].dims), in[0].dims[a], a);
    }
    total_ = in[0].numel();
    outs_.assign(out.size(), nullptr);
    elem_size_ = dtype_size(in[0].dtype);
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    for (size_t i = 0; i < out.size(); ++i) outs_[i] = out[i].data;
    // Even shares of the whole, at least 64 KiB of floats (part_grain) a thread.
    parallel::parallel_for(thread_pool(), total_, part_grain(1), [&](int64_t b, int64_t e) {
      cpu::split_range(in[0].data, outs_, chunks_, elem_size_, b, e);
    });
    return Status::ok();
  }

 private:
  std::vector<void*> outs_;  // sized in reshape(), filled per run
};

class SplitTactic final : public BuiltinTactic {
 public:
  SplitTactic() : BuiltinTactic("split.copy", "Split") {}
  std::string why_not(const LayerSpec& spec) const override { return copyable_why_not(spec); }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    return std::unique_ptr<LayerKernel>(new SplitKernel(*spec.node, spec.since_version));
  }
};

}  // namespace

void append_movement_tactics(std::vector<const Tactic*>& out) {
  static const ConcatTactic concat;
  static const SplitTactic split;
  static const TransposeTactic transpose;
  static const SliceTactic slice;
  static const GatherTactic gather(/*constant_indices=*/true);
  static const GatherTactic gather_indices(/*constant_indices=*/false);
  static const ExpandTactic expand;
  static const PatchesTactic patches;
  static const CopyTactic copies[] = {
      {"reshape.copy", "Reshape"},     {"flatten.copy", "Flatten"},   {"squeeze.copy", "Squeeze"},
      {"unsqueeze.copy", "Unsqueeze"}, {"identity.copy", "Identity"},
  };
  out.insert(out.end(),
             {&concat, &split, &transpose, &slice, &gather, &gather_indices, &expand, &patches});
  for (const auto& t : copies) out.push_back(&t);
}

}  // namespace kiln::tactics::builtin
