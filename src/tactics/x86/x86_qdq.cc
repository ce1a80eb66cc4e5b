// QuantizeLinear and DequantizeLinear, per tensor, uint8 or int8 against float32, on kiln's x86
// kernels (kernels/x86/qkernels.h): the INT8 passes put them at every float32 / INT8 boundary.
// Bit-exact to the reference (the same float32 division, rounding and saturation); the reference
// fallback ref.generic runs the per-axis and wider-type cases.
#include <fmt/format.h>

#include "parallel/thread_pool.h"
#include "tactics/x86/x86_quant.h"

namespace kiln::tactics::x86 {
namespace {

enum class QdqOp { kQuantize, kDequantize };

bool is_8bit(DType t) { return t == DType::kU8 || t == DType::kI8; }

// A scale or zero point (input i) holding one value.
std::string per_tensor_why_not(const LayerSpec& spec, size_t i, std::string_view what) {
  const ir::TensorDesc& d = spec.inputs[i];
  if (!d.is_static() || dims_numel(d.static_dims()) != 1 || d.rank() > 1) {
    return fmt::format("the {} is {}: this tactic quantizes per tensor (one scale)", what,
                       d.to_string());
  }
  return "";
}

std::string qdq_why_not(const LayerSpec& spec, QdqOp op) {
  if (spec.node->attrs.get_int("block_size", 0) != 0) return "block quantization";
  if (!spec.has_input(1) || spec.outputs.empty()) return "the scale is absent";
  const DType x = spec.inputs[0].dtype, y = spec.outputs[0].dtype;
  const DType q = op == QdqOp::kQuantize ? y : x;
  const DType f = op == QdqOp::kQuantize ? x : y;
  if (!is_8bit(q) || f != DType::kF32) {
    return fmt::format("{} to {}: this tactic converts between float32 and uint8 or int8",
                       dtype_name(x), dtype_name(y));
  }
  if (spec.inputs[1].dtype != DType::kF32) {
    return fmt::format("the scale is {}, expected float32", dtype_name(spec.inputs[1].dtype));
  }
  std::string why = per_tensor_why_not(spec, 1, "scale");
  if (why.empty() && spec.has_input(2)) {
    if (spec.inputs[2].dtype != q) {
      return fmt::format("the zero point is {} for {} data", dtype_name(spec.inputs[2].dtype),
                         dtype_name(q));
    }
    why = per_tensor_why_not(spec, 2, "zero point");
  }
  return why;
}

class QdqKernel final : public LayerKernel {
 public:
  QdqKernel(QdqOp op, kx::QIsa isa, bool is_signed) : op_(op), isa_(isa), signed_(is_signed) {}

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const float scale = *static_cast<const float*>(in[1].data);
    int32_t zero = 0;
    if (in.size() > 2 && in[2].dtype != DType::kUndefined) {
      zero = signed_ ? *static_cast<const int8_t*>(in[2].data)
                     : *static_cast<const uint8_t*>(in[2].data);
    }
    const void* x = in[0].data;
    void* y = out[0].data;
    auto body = [&](int64_t b, int64_t e) {
      if (op_ == QdqOp::kQuantize) {
        kx::quantize_per_tensor(isa_, static_cast<const float*>(x), scale, zero, signed_, y, b, e);
      } else {
        kx::dequantize_per_tensor(isa_, x, scale, zero, signed_, static_cast<float*>(y), b, e);
      }
    };
    // Streaming: a thread's share is worth waking it only past a few L2 pages of data.
    parallel::parallel_for(thread_pool(), in[0].numel(), 32768, body);
    return Status::ok();
  }

 private:
  QdqOp op_;
  kx::QIsa isa_;
  bool signed_;
};

class QdqTactic final : public X86QuantTactic {
 public:
  QdqTactic(QdqOp op, kx::QIsa isa)
      : X86QuantTactic(fmt::format("{}.per_tensor.{}",
                                   op == QdqOp::kQuantize ? "quantize_linear" : "dequantize_linear",
                                   qisa_suffix(isa)),
                       "", op == QdqOp::kQuantize ? "QuantizeLinear" : "DequantizeLinear", isa),
        op_(op) {}

  std::string why_not(const LayerSpec& spec) const override { return qdq_why_not(spec, op_); }

  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    const DType q = op_ == QdqOp::kQuantize ? spec.outputs[0].dtype : spec.inputs[0].dtype;
    return std::unique_ptr<LayerKernel>(new QdqKernel(op_, qisa(), q == DType::kI8));
  }

 private:
  QdqOp op_;
};

}  // namespace

void append_x86_qdq_tactics(std::vector<const Tactic*>& out) {
  static const std::vector<QdqTactic> tactics = [] {
    std::vector<QdqTactic> v;
    for (QdqOp op : {QdqOp::kQuantize, QdqOp::kDequantize}) {
      for (kx::QIsa isa : {kx::QIsa::kAvx512Vnni, kx::QIsa::kAvx2}) v.emplace_back(op, isa);
    }
    return v;
  }();
  for (const QdqTactic& t : tactics) out.push_back(&t);
}

}  // namespace kiln::tactics::x86
