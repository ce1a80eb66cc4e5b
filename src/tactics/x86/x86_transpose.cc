// Transpose of a 4-D tensor of bytes between NCHW and NHWC (perm [0, 2, 3, 1] and [0, 3, 1, 2]):
// per image a [rows, cols] byte matrix transposed in 16 x 16 SSE2 blocks
// (kernels/x86/transpose_bytes.h), the output's rows split over the pool in multiples of 16.
// qconv_nhwc puts these around its chains of uint8 convolutions.
#include <fmt/format.h>

#include "kernels/x86/transpose_bytes.h"
#include "tactics/builtin_util.h"
#include "tactics/x86/x86_common.h"

namespace kiln::tactics::x86 {
namespace {

// The perm's matrix view of one image: in [rows, cols] -> out [cols, rows]; false for other perms.
bool byte_matrix(std::span<const int64_t> perm, std::span<const int64_t> in, int64_t& rows,
                 int64_t& cols) {
  const std::vector<int64_t> p(perm.begin(), perm.end());
  if (in.size() != 4) return false;
  if (p == std::vector<int64_t>{0, 2, 3, 1}) {  // [C, H*W] -> [H*W, C]
    rows = in[1];
    cols = in[2] * in[3];
    return true;
  }
  if (p == std::vector<int64_t>{0, 3, 1, 2}) {  // [H*W, C] -> [C, H*W]
    rows = in[1] * in[2];
    cols = in[3];
    return true;
  }
  return false;
}

class TransposeBytesKernel final : public LayerKernel {
 public:
  explicit TransposeBytesKernel(const LayerSpec& spec)
      : node_(*spec.node), perm_(spec.node->attrs.get_ints("perm")) {}

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    if (!byte_matrix(perm_, in[0].dims, rows_, cols_)) {
      return builtin::layer_error(node_, "takes 4-D inputs and perm [0,2,3,1] or [0,3,1,2]");
    }
    batch_ = in[0].dims[0];
    if (out[0].nbytes() != in[0].nbytes()) {
      return builtin::layer_error(node_, "output [{}] does not hold the input [{}]",
                                  dims_to_string(out[0].dims), dims_to_string(in[0].dims));
    }
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const auto* x = static_cast<const uint8_t*>(in[0].data);
    auto* y = static_cast<uint8_t*>(out[0].data);
    const int64_t blocks = (cols_ + 15) / 16, plane = rows_ * cols_;
    // Blocks of 16 output rows, images outermost; at least ~16 KiB a part.
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(16 * rows_, 1));
    parallel::parallel_for(thread_pool(), batch_ * blocks, grain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e;) {
        const int64_t n = i / blocks, first = i % blocks;
        const int64_t last = std::min(blocks, first + (e - i));
        kx::transpose_bytes(x + n * plane, rows_, cols_, first * 16, std::min(cols_, last * 16),
                            y + n * plane);
        i += last - first;
      }
    });
    return Status::ok();
  }

 private:
  const ir::Node& node_;
  std::vector<int64_t> perm_;
  int64_t batch_ = 0, rows_ = 0, cols_ = 0;
};

class TransposeBytesTactic final : public Tactic {
 public:
  std::string_view name() const override { return "transpose.nchw_nhwc.bytes.sse2"; }
  std::string_view op_type() const override { return "Transpose"; }
  // SSE2 only, which every x86-64 CPU has: the floor kiln's x86 tactics name (KILN_MAX_ISA=sse4_2
  // keeps it).
  uint64_t required_features() const override { return kIsaSse4_2; }
  std::string why_not(const LayerSpec& spec) const override {
    if (dtype_size(spec.inputs[0].dtype) != 1) return "moves 1-byte elements only";
    const std::vector<int64_t> perm = spec.node->attrs.get_ints("perm");
    const std::vector<int64_t> dims(4, 1);
    int64_t rows = 0, cols = 0;
    if (!spec.inputs[0].has_rank() || spec.inputs[0].rank() != 4 ||
        !byte_matrix(perm, dims, rows, cols)) {
      return "takes a 4-D NCHW <-> NHWC transpose only (perm [0,2,3,1] or [0,3,1,2])";
    }
    return "";
  }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    return std::unique_ptr<LayerKernel>(new TransposeBytesKernel(spec));
  }
};

}  // namespace

void append_x86_transpose_tactics(std::vector<const Tactic*>& out) {
  static const TransposeBytesTactic bytes;
  out.push_back(&bytes);
}

}  // namespace kiln::tactics::x86
