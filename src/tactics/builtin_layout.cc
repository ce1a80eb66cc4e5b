// The nChw16c reorders kiln.ToNchw16c and kiln.FromNchw16c, and the blocked pooling and channel
// scale kiln.GlobalAveragePoolNchw16c and kiln.MulNchw16c (ops/kiln_layout.h), split over the
// context's pool one channel block of one image (a plane) at a time.
#include <algorithm>

#include "kernels/cpu/nchw16c.h"
#include "kernels/ref/layout.h"
#include "ops/kiln_fused.h"
#include "ops/kiln_layout.h"
#include "tactics/builtin.h"
#include "tactics/builtin_util.h"

namespace kiln::tactics::builtin {
namespace {

namespace ref = kernels::ref;

// Planes of hw pixels x 16 channels per parallel chunk: at least 32K floats, as pooling's, so a
// small layer (a 7x7 squeeze) runs on the calling thread without waking a sleeping worker.
int64_t block_grain(int64_t hw) {
  return std::max<int64_t>(1, 32768 / std::max<int64_t>(1, hw * ref::kChannelBlock));
}

class ReorderKernel final : public LayerKernel {
 public:
  ReorderKernel(const ir::Node& node, bool to_blocked) : node_(node), to_blocked_(to_blocked) {}

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const TensorView& plain = to_blocked_ ? in[0] : out[0];
    const TensorView& blocked = to_blocked_ ? out[0] : in[0];
    if (plain.rank() != 4 || blocked.rank() != 4 || plain.dim(0) != blocked.dim(0) ||
        plain.dim(2) != blocked.dim(2) || plain.dim(3) != blocked.dim(3) ||
        blocked.dim(1) != ref::padded_channels(plain.dim(1))) {
      return layer_error(node_, "[{}] is not the blocked form of [{}]",
                         dims_to_string(blocked.dims), dims_to_string(plain.dims));
    }
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const TensorView& plain = to_blocked_ ? in[0] : out[0];
    const int64_t n = plain.dim(0), c = plain.dim(1), hw = plain.dim(2) * plain.dim(3);
    const int64_t blocks = ref::channel_blocks(c);
    const auto* x = static_cast<const float*>(in[0].data);
    auto* y = static_cast<float*>(out[0].data);
    parallel::parallel_for(thread_pool(), n * blocks, block_grain(hw), [&](int64_t b0, int64_t b1) {
      for (int64_t u = b0; u < b1; ++u) {
        const int64_t i = u / blocks, b = u % blocks, c0 = b * ref::kChannelBlock;
        const int64_t lanes = std::min(ref::kChannelBlock, c - c0);
        const int64_t plain_at = (i * c + c0) * hw, blocked_at = u * hw * ref::kChannelBlock;
        if (to_blocked_) {
          kernels::cpu::to_nchw16c_block(x + plain_at, lanes, hw, y + blocked_at);
        } else {
          kernels::cpu::from_nchw16c_block(x + blocked_at, lanes, hw, y + plain_at);
        }
      }
    });
    return Status::ok();
  }

 private:
  const ir::Node& node_;
  bool to_blocked_;
};

// kiln.GlobalAveragePoolNchw16c (Y [N, Cp, 1, 1]) or kiln.MulNchw16c (Y of X's shape).
class BlockedPlaneKernel final : public LayerKernel {
 public:
  BlockedPlaneKernel(const ir::Node& node, bool pool) : node_(node), pool_(pool) {}

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const TensorView& x = in[0];
    const bool pool_ok =
        !pool_ || (out[0].rank() == 4 && out[0].dim(0) == x.dim(0) && out[0].dim(1) == x.dim(1) &&
                   out[0].numel() == x.dim(0) * x.dim(1));
    const bool mul_ok = pool_ || (in[1].rank() == 4 && in[1].dim(1) == x.dim(1) &&
                                  (in[1].dim(0) == 1 || in[1].dim(0) == x.dim(0)) &&
                                  in[1].dim(2) * in[1].dim(3) == 1 && same_dims(out[0], x.dims));
    if (x.rank() != 4 || x.dim(1) % ref::kChannelBlock != 0 || !pool_ok || !mul_ok) {
      return layer_error(node_, "unexpected blocked shapes: X [{}], Y [{}]", dims_to_string(x.dims),
                         dims_to_string(out[0].dims));
    }
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const TensorView& x = in[0];
    const int64_t blocks = x.dim(1) / ref::kChannelBlock, hw = x.dim(2) * x.dim(3);
    const auto* xs = static_cast<const float*>(x.data);
    auto* y = static_cast<float*>(out[0].data);
    const float* s = pool_ ? nullptr : static_cast<const float*>(in[1].data);
    const bool per_image = !pool_ && in[1].dim(0) != 1;
    parallel::parallel_for(thread_pool(), x.dim(0) * blocks, block_grain(hw),
                           [&](int64_t b, int64_t e) {
                             if (pool_) {
                               kernels::cpu::global_avg_pool_nchw16c(xs, hw, y, b, e);
                             } else {
                               kernels::cpu::mul_nchw16c(xs, s, per_image, blocks, hw, y, b, e);
                             }
                           });
    return Status::ok();
  }

 private:
  const ir::Node& node_;
  bool pool_;
};

// A tactic for one of the layout ops (float32, 4-D): kernel K made with the node and `mode` (the
// reorder's direction, or pooling rather than scaling).
template <class K>
class LayoutTactic final : public BuiltinTactic {
 public:
  LayoutTactic(std::string_view name, std::string_view op, bool mode)
      : BuiltinTactic(name, op), mode_(mode) {}
  std::string_view domain() const override { return ops::kKilnDomain; }
  std::string why_not(const LayerSpec& spec) const override {
    std::string why = require_f32(spec);
    if (why.empty()) why = require_rank(spec, 0, 4, 4);
    return why;
  }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    return std::unique_ptr<LayerKernel>(new K(*spec.node, mode_));
  }

 private:
  bool mode_;
};

}  // namespace

void append_layout_tactics(std::vector<const Tactic*>& out) {
  static const LayoutTactic<ReorderKernel> to("reorder.to_nchw16c", ops::kToNchw16c, true);
  static const LayoutTactic<ReorderKernel> from("reorder.from_nchw16c", ops::kFromNchw16c, false);
  static const LayoutTactic<BlockedPlaneKernel> pool("pool.global_avg_nchw16c.f32",
                                                     ops::kGlobalAveragePoolNchw16c, true);
  static const LayoutTactic<BlockedPlaneKernel> mul("eltwise.mul_nchw16c.f32", ops::kMulNchw16c,
                                                    false);
  out.insert(out.end(), {&to, &from, &pool, &mul});
}

}  // namespace kiln::tactics::builtin
