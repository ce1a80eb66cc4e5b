// MaxPool, AveragePool and their global forms with the builtin pooling kernels.
#include "tactics/builtin_pool.h"

#include <fmt/format.h>

#include <algorithm>

#include "kernels/cpu/nchw16c.h"
#include "kernels/cpu/pool.h"
#include "kernels/ref/layout.h"
#include "ops/kiln_fused.h"
#include "ops/kiln_layout.h"
#include "ops/nn_window.h"
#include "parallel/thread_pool.h"
#include "tactics/builtin.h"
#include "tactics/builtin_util.h"

namespace kiln::tactics::builtin {
namespace {

namespace cpu = kernels::cpu;

enum class PoolKind { kMax, kAverage };

class PoolKernel final : public LayerKernel {
 public:
  PoolKernel(const LayerSpec& spec, PoolKind kind)
      : node_(*spec.node),
        since_version_(spec.since_version),
        kind_(kind),
        count_include_pad_(spec.node->attrs.get_int("count_include_pad", 0) != 0) {}

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    KILN_ASSIGN_OR_RETURN(p_, pool_params(node_, since_version_, in[0], out[0]));
    if (kind_ == PoolKind::kAverage) {
      table_.resize(cpu::avg_pool2d_table_floats(p_));
      cpu::avg_pool2d_table(p_, count_include_pad_, table_.data());
    }
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const int64_t rows = cpu::pool2d_rows(p_);
    const int64_t grain = pool_row_grain(p_);
    if (in[0].dtype == DType::kU8) {
      const auto* x = static_cast<const uint8_t*>(in[0].data);
      auto* y = static_cast<uint8_t*>(out[0].data);
      parallel::parallel_for(thread_pool(), rows, grain,
                             [&](int64_t b, int64_t e) { cpu::max_pool2d(p_, x, y, b, e); });
      return Status::ok();
    }
    const float* x = input_f32(in, 0);
    auto* y = static_cast<float*>(out[0].data);
    parallel::parallel_for(thread_pool(), rows, grain, [&](int64_t b, int64_t e) {
      if (kind_ == PoolKind::kMax) {
        cpu::max_pool2d(p_, x, y, b, e);
      } else {
        cpu::avg_pool2d(p_, table_.data(), x, y, b, e);
      }
    });
    return Status::ok();
  }

 private:
  const ir::Node& node_;
  int since_version_;
  PoolKind kind_;
  bool count_include_pad_;
  cpu::Pool2DParams p_;
  FloatBuffer table_;
};

// uint8: MaxPool of a quantized tensor (quant/maxpool_hoist.h), float32 otherwise.
class PoolTactic final : public BuiltinTactic {
 public:
  PoolTactic(std::string_view name, std::string_view op, PoolKind kind, bool u8 = false)
      : BuiltinTactic(name, op), kind_(kind), u8_(u8) {}
  std::string why_not(const LayerSpec& spec) const override {
    return pool_why_not(spec, u8_ ? DType::kU8 : DType::kF32);
  }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    return std::unique_ptr<LayerKernel>(new PoolKernel(spec, kind_));
  }

 private:
  PoolKind kind_;
  bool u8_;
};

// --- global pooling ------------------------------------------------------------------------------

class GlobalPoolKernel final : public LayerKernel {
 public:
  GlobalPoolKernel(const ir::Node& node, PoolKind kind) : node_(node), kind_(kind) {}

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    planes_ = in[0].dim(0) * in[0].dim(1);
    size_ = planes_ > 0 ? in[0].numel() / planes_ : 0;
    if (out[0].numel() != planes_) {
      return layer_error(node_, "output is [{}] for input [{}]", dims_to_string(out[0].dims),
                         dims_to_string(in[0].dims));
    }
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    auto* y = static_cast<float*>(out[0].data);
    if (kind_ == PoolKind::kMax) {
      cpu::global_max_pool(planes_, size_, input_f32(in, 0), y);
    } else {
      cpu::global_avg_pool(planes_, size_, input_f32(in, 0), y);
    }
    return Status::ok();
  }

 private:
  const ir::Node& node_;
  PoolKind kind_;
  int64_t planes_ = 0;
  int64_t size_ = 0;
};

class GlobalPoolTactic final : public BuiltinTactic {
 public:
  GlobalPoolTactic(std::string_view name, std::string_view op, PoolKind kind)
      : BuiltinTactic(name, op), kind_(kind) {}
  std::string why_not(const LayerSpec& spec) const override {
    std::string why = require_f32(spec);
    if (why.empty()) why = require_rank(spec, 0, 3, 64);
    return why;
  }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    return std::unique_ptr<LayerKernel>(new GlobalPoolKernel(*spec.node, kind_));
  }

 private:
  PoolKind kind_;
};

// --- blocked MaxPool ----------------------------------------------------------------------------

// kiln.MaxPoolNchw16c: MaxPool's window (opset 12 attributes) over planes of 16 lanes.
class BlockedMaxPoolKernel final : public LayerKernel {
 public:
  BlockedMaxPoolKernel(const ir::Node& node, BlockedMaxPoolRows rows)
      : node_(node), rows_(std::move(rows)) {}

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const TensorView& x = in[0];
    if (x.rank() != 4 || x.dim(1) % kernels::ref::kChannelBlock != 0) {
      return layer_error(node_, "X [{}] is not a blocked [N, Cp, H, W] tensor",
                         dims_to_string(x.dims));
    }
    KILN_ASSIGN_OR_RETURN(p_, pool_params(node_, 12, x, out[0]));
    p_.planes /= kernels::ref::kChannelBlock;
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const float* x = input_f32(in, 0);
    auto* y = static_cast<float*>(out[0].data);
    const int64_t grain =
        std::max<int64_t>(1, 2048 / std::max<int64_t>(1, p_.out_w * p_.k_h * p_.k_w));
    parallel::parallel_for(thread_pool(), cpu::pool2d_rows(p_), grain,
                           [&](int64_t b, int64_t e) { rows_(p_, x, y, b, e); });
    return Status::ok();
  }

 private:
  const ir::Node& node_;
  BlockedMaxPoolRows rows_;
  cpu::Pool2DParams p_;
};

class BlockedMaxPoolTactic final : public BuiltinTactic {
 public:
  BlockedMaxPoolTactic() : BuiltinTactic("pool.max_nchw16c.f32", ops::kMaxPoolNchw16c) {}
  std::string_view domain() const override { return ops::kKilnDomain; }
  std::string why_not(const LayerSpec& spec) const override {
    return blocked_max_pool_why_not(spec);
  }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    return make_blocked_max_pool_kernel(spec, &cpu::max_pool_nchw16c);
  }
};

}  // namespace

std::string blocked_max_pool_why_not(const LayerSpec& spec) {
  std::string why = require_f32(spec);
  if (why.empty()) why = require_rank(spec, 0, 4, 4);
  return why;
}

std::unique_ptr<LayerKernel> make_blocked_max_pool_kernel(const LayerSpec& spec,
                                                          BlockedMaxPoolRows rows) {
  return std::make_unique<BlockedMaxPoolKernel>(*spec.node, std::move(rows));
}

Result<kernels::cpu::Pool2DParams> pool_params(const ir::Node& node, int since_version,
                                               const TensorView& x, const TensorView& y) {
  const ops::NodeContext ctx(node, since_version);
  const auto spatial = static_cast<size_t>(x.rank() - 2);
  ops::WindowAttrs w;
  KILN_RETURN_IF_ERROR(ops::read_kernel_shape(ctx, spatial, /*required=*/true, w));
  KILN_RETURN_IF_ERROR(ops::read_window_attrs(ctx, w, /*with_ceil_mode=*/since_version >= 10));
  Dims want{x.dim(0), x.dim(1)};
  int64_t in[2] = {1, 1}, out[2] = {1, 1}, k[2] = {1, 1}, s[2] = {1, 1}, dil[2] = {1, 1};
  int64_t pb[2] = {0, 0}, pe[2] = {0, 0};
  for (size_t d = 0; d < spatial; ++d) {
    const size_t slot = d + 2 - spatial;  // 1-D pooling fills the width slot only
    in[slot] = x.dim(static_cast<int>(d + 2));
    out[slot] = ops::window_out_dim(w, d, in[slot]);
    want.push_back(out[slot]);
    k[slot] = w.kernel[d];
    s[slot] = w.strides[d];
    dil[slot] = w.dilations[d];
    std::tie(pb[slot], pe[slot]) = ops::window_pads(w, d, in[slot]);
  }
  if (!same_dims(y, want)) {
    return layer_error(node, "output is [{}] but the window gives [{}]", dims_to_string(y.dims),
                       dims_to_string(want));
  }
  return kernels::cpu::Pool2DParams{x.dim(0) * x.dim(1),
                                    in[0],
                                    in[1],
                                    out[0],
                                    out[1],
                                    k[0],
                                    k[1],
                                    s[0],
                                    s[1],
                                    dil[0],
                                    dil[1],
                                    pb[0],
                                    pb[1],
                                    pe[0],
                                    pe[1]};
}

std::string pool_why_not(const LayerSpec& spec, DType dtype) {
  const auto& outs = spec.node->outputs;
  if (outs.size() > 1 && outs[1] != ir::kNoValue) return "the Indices output is not produced";
  std::string why;
  if (dtype == DType::kU8) {
    if (spec.inputs[0].dtype != DType::kU8 || spec.outputs[0].dtype != DType::kU8) {
      why = fmt::format("takes uint8, not {}", dtype_name(spec.inputs[0].dtype));
    }
  } else {
    why = require_f32(spec);
  }
  if (why.empty()) why = require_rank(spec, 0, 3, 4);
  return why;
}

void append_pool_tactics(std::vector<const Tactic*>& out) {
  static const PoolTactic max_pool("pool.max.f32", "MaxPool", PoolKind::kMax);
  static const PoolTactic max_pool_u8("pool.max.u8", "MaxPool", PoolKind::kMax, true);
  static const PoolTactic avg_pool("pool.avg.f32", "AveragePool", PoolKind::kAverage);
  static const GlobalPoolTactic global_avg("pool.global_avg.f32", "GlobalAveragePool",
                                           PoolKind::kAverage);
  static const GlobalPoolTactic global_max("pool.global_max.f32", "GlobalMaxPool", PoolKind::kMax);
  static const BlockedMaxPoolTactic max_pool_nchw16c;
  out.insert(out.end(),
             {&max_pool, &max_pool_u8, &avg_pool, &global_avg, &global_max, &max_pool_nchw16c});
}

}  // namespace kiln::tactics::builtin
