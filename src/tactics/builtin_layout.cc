// The nChw16c reorders kiln.ToNchw16c and kiln.FromNchw16c (ops/kiln_layout.h), split over the
// context's pool one channel block of one image at a time.
#include <algorithm>

#include "kernels/ref/layout.h"
#include "ops/kiln_fused.h"
#include "ops/kiln_layout.h"
#include "tactics/builtin.h"
#include "tactics/builtin_util.h"

namespace kiln::tactics::builtin {
namespace {

namespace ref = kernels::ref;

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
    parallel::parallel_for(thread_pool(), n * blocks, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t u = b0; u < b1; ++u) {
        const int64_t i = u / blocks, b = u % blocks, c0 = b * ref::kChannelBlock;
        const int64_t lanes = std::min(ref::kChannelBlock, c - c0);
        const int64_t plain_at = (i * c + c0) * hw, blocked_at = u * hw * ref::kChannelBlock;
        if (to_blocked_) {
          ref::to_nchw16c(x + plain_at, 1, lanes, hw, y + blocked_at);
        } else {
          ref::from_nchw16c(x + blocked_at, 1, lanes, hw, y + plain_at);
        }
      }
    });
    return Status::ok();
  }

 private:
  const ir::Node& node_;
  bool to_blocked_;
};

class ReorderTactic final : public BuiltinTactic {
 public:
  ReorderTactic(std::string_view name, std::string_view op, bool to_blocked)
      : BuiltinTactic(name, op), to_blocked_(to_blocked) {}
  std::string_view domain() const override { return ops::kKilnDomain; }
  std::string why_not(const LayerSpec& spec) const override {
    std::string why = require_f32(spec);
    if (why.empty()) why = require_rank(spec, 0, 4, 4);
    return why;
  }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    return std::unique_ptr<LayerKernel>(new ReorderKernel(*spec.node, to_blocked_));
  }

 private:
  bool to_blocked_;
};

}  // namespace

void append_layout_tactics(std::vector<const Tactic*>& out) {
  static const ReorderTactic to("reorder.to_nchw16c", ops::kToNchw16c, true);
  static const ReorderTactic from("reorder.from_nchw16c", ops::kFromNchw16c, false);
  out.insert(out.end(), {&to, &from});
}

}  // namespace kiln::tactics::builtin
