// QuantizeLinear and DequantizeLinear, per tensor, uint8 or int8 against float32, on kiln's x86
// kernels (kernels/x86/qkernels.h): the INT8 passes put them at every float32 / INT8 boundary.
// Bit-exact to the reference (the same float32 division, rounding and saturation); the reference
// fallback ref.generic runs the per-axis and wider-type cases. And kiln.ScaleQuantize (a channel
// scaling quantized in one pass): the products of a block of the plane, then the same kernel.
#include <fmt/format.h>

#include <algorithm>

#include "parallel/thread_pool.h"
#include "tactics/x86/x86_quant.h"

namespace kiln::tactics::x86 {
namespace {

enum class QdqOp { kQuantize, kDequantize };

bool is_8bit(DType t) { return t == DType::kU8 || t == DType::kI8; }

// Elements a thread's share must reach before it is worth waking: streaming conversions, a few L2
// pages of data.
constexpr int64_t kStreamGrain = 32768;

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
    parallel::parallel_for(thread_pool(), in[0].numel(), kStreamGrain, body);
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

// --- kiln.ScaleQuantize ---------------------------------------------------------------------

class ScaleQuantizeKernel final : public LayerKernel {
 public:
  ScaleQuantizeKernel(kx::QIsa isa, float y_scale, int32_t y_zero)
      : isa_(isa), y_scale_(y_scale), y_zero_(y_zero) {}

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const TensorView& x = in[0];
    const int64_t n = x.dim(0), c = x.dim(1), planes = n * c;
    const int64_t plane = planes == 0 ? 0 : x.numel() / planes;
    const bool per_image = in[1].dim(0) != 1;
    const auto* xs = static_cast<const float*>(x.data);
    const auto* s = static_cast<const float*>(in[1].data);
    auto* y = static_cast<uint8_t*>(out[0].data);
    auto body = [&](int64_t b, int64_t e) {
      alignas(64) float v[kBlock];  // the products, rounded to float32 as Mul rounds them
      for (int64_t i = b; i < e; ++i) {
        const float k = s[per_image ? i : i % c];
        for (int64_t j = 0; j < plane; j += kBlock) {
          const int64_t len = std::min(kBlock, plane - j);
          const float* xi = xs + i * plane + j;
          for (int64_t t = 0; t < len; ++t) v[t] = xi[t] * k;
          kx::quantize_per_tensor(isa_, v, y_scale_, y_zero_, false, y + i * plane + j, 0, len);
        }
      }
    };
    parallel::parallel_for(thread_pool(), planes,
                           std::max<int64_t>(1, kStreamGrain / std::max<int64_t>(plane, 1)), body);
    return Status::ok();
  }

 private:
  static constexpr int64_t kBlock = 512;
  kx::QIsa isa_;
  float y_scale_;
  int32_t y_zero_;
};

class ScaleQuantizeTactic final : public X86QuantTactic {
 public:
  explicit ScaleQuantizeTactic(kx::QIsa isa)
      : X86QuantTactic(fmt::format("scale_quantize.per_channel.{}", qisa_suffix(isa)), "kiln",
                       "ScaleQuantize", isa) {}

  // The op's shape function has checked X, S and the attributes.
  std::string why_not(const LayerSpec&) const override { return ""; }

  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    const ir::Attributes& a = spec.node->attrs;
    return std::unique_ptr<LayerKernel>(new ScaleQuantizeKernel(
        qisa(), a.get_float("y_scale", 1.0f), static_cast<int32_t>(a.get_int("y_zero_point", 0))));
  }
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
  static const ScaleQuantizeTactic scale_quantize[] = {ScaleQuantizeTactic(kx::QIsa::kAvx512Vnni),
                                                       ScaleQuantizeTactic(kx::QIsa::kAvx2)};
  for (const ScaleQuantizeTactic& t : scale_quantize) out.push_back(&t);
}

}  // namespace kiln::tactics::x86
