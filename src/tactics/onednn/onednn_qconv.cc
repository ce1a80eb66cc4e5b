// kiln.QConvNhwc on oneDNN's int8 convolution: uint8 NHWC source and destination (the layout
// its brgconv kernels read without packing: each pixel's channels are contiguous), int8 weights
// reordered once into the primitive's layout, and kiln's epilogue (kernels/ref/qconv.h) in
// oneDNN's terms, all in units of Y's scale:
//
//   output scale[c] = x_scale * w_scale[c] / y_scale, applied to (acc + bias[c] / (x_scale *
//   w_scale[c])); the residual as a sum post-op of scale z_scale / y_scale and zero point z_zero;
//   the activation as an eltwise post-op (those that commute with a positive scale: ReLU,
//   LeakyRelu, Clip with its bounds divided by y_scale); x_zero and y_zero as zero points.
//
// The float operations happen in another order than the reference's, so a result may differ from
// it by one in the last place (the kernel tests allow that, and measure how often).

#include <fmt/format.h>

#include <cstring>

#include "base/cpu_features.h"
#include "tactics/onednn/onednn_common.h"
#include "tactics/onednn/onednn_tactics.h"

namespace kiln::tactics::onednn {
namespace {

namespace ref = kernels::ref;
using dnnl::memory;
using dt = memory::data_type;
using tag = memory::format_tag;

constexpr size_t kQWScaleInput = 2, kQBiasInput = 3, kQResidualInput = 4;

// The convolution's logical (NCHW) dims and window from an NHWC X and OIHW W.
struct QConvShapes {
  memory::dims src, weights, bias, dst;
  memory::dims strides, dilates, pad_l, pad_r;
};

Result<QConvShapes> qconv_shapes(const ir::Node& node, std::span<const int64_t> x_nhwc,
                                 std::span<const int64_t> w, std::span<const int64_t> y_nhwc) {
  if (x_nhwc.size() != 4 || w.size() != 4 || y_nhwc.size() != 4) {
    return layer_status(node, "needs 4-D X, W and Y");
  }
  const ir::Attributes& a = node.attrs;
  QConvShapes s;
  s.src = {x_nhwc[0], x_nhwc[3], x_nhwc[1], x_nhwc[2]};
  s.weights = {w[0], w[1], w[2], w[3]};
  s.bias = {w[0]};
  s.dst = {y_nhwc[0], y_nhwc[3], y_nhwc[1], y_nhwc[2]};
  const std::vector<int64_t> strides = a.get_ints("strides", {1, 1});
  const std::vector<int64_t> dil = a.get_ints("dilations", {1, 1});
  const std::vector<int64_t> pads = a.get_ints("pads", {0, 0, 0, 0});
  if (strides.size() != 2 || dil.size() != 2 || pads.size() != 4) {
    return layer_status(node, "needs 2-D strides, dilations and pads");
  }
  for (int d = 0; d < 2; ++d) {
    s.strides.push_back(strides[d]);
    s.dilates.push_back(dil[d] - 1);
    s.pad_l.push_back(pads[d]);
    s.pad_r.push_back(
        exact_end_pad(s.src[2 + d], s.dst[2 + d], w[2 + d], strides[d], dil[d], pads[d]));
  }
  return s;
}

std::string epilogue_why_not(const LayerSpec& spec) {
  const ir::Node& n = *spec.node;
  if (n.attrs.get_int("output_type", 1) != 2) return "oneDNN's int8 path here writes uint8 Y only";
  if (spec.has_input(kQResidualInput) && spec.inputs[kQResidualInput].dtype != DType::kU8) {
    return "the residual must be uint8 (a float one has no sum post-op here)";
  }
  if (spec.constant(kQWScaleInput) == nullptr ||
      (spec.has_input(kQBiasInput) && spec.constant(kQBiasInput) == nullptr)) {
    return "needs constant W_scale and B";
  }
  if (std::string why = activation_why_not(n); !why.empty()) return why;
  const ref::ActivationParams params = activation_of(n);
  const ref::Activation act = params.kind;
  if (act == ref::Activation::kClip && params.alpha > params.beta) {
    return "Clip with min above max (oneDNN's clip needs min <= max)";
  }
  switch (act) {
    case ref::Activation::kNone:
    case ref::Activation::kRelu:
    case ref::Activation::kLeakyRelu:
    case ref::Activation::kClip:
      break;
    default:
      return fmt::format("{} does not commute with Y's scale (oneDNN applies it in Y's units)",
                         ref::activation_name(act));
  }
  if (n.attrs.get_int("group", 1) != 1) return "one group only";
  return "";
}

// Which of oneDNN's implementations a tactic runs: the one it lists first (brgconv on AVX-512
// VNNI), or the first of its older jit_int8 kernels, which took 0.8-1.0x brgconv's time on some of
// ResNet-50's 1x1 layers with their memory out of the caches (2026-12-07, Zen 5, 2 threads) and
// more on others: the tuner times both.
enum class QImpl { kFirst, kJit };

class QConvNhwcKernel final : public LayerKernel {
 public:
  QConvNhwcKernel(const LayerSpec& spec, QImpl impl)
      : node_(*spec.node), prepacked_(spec.prepacked), impl_(impl) {
    if (const Tensor* w = spec.constant(1)) weights_ = *w;
    w_scale_ = *spec.constant(kQWScaleInput);
    if (const Tensor* b = spec.constant(kQBiasInput)) bias_in_ = *b;
    residual_ = spec.has_input(kQResidualInput);
  }

  // The weights as the engine stores them, for the shapes the spec has (static ones only).
  Result<Tensor> prepack(const LayerSpec& spec) {
    const std::optional<Dims> x = known_dims(spec.inputs[0], false);
    const std::optional<Dims> y = known_dims(spec.outputs[0], false);
    if (!x || !y || !weights_.defined()) return Tensor();
    KILN_ASSIGN_OR_RETURN(const QConvShapes s, qconv_shapes(node_, *x, weights_.dims(), *y));
    KILN_RETURN_IF_ERROR(prepare_epilogue());
    OmpThreads threads(nullptr);
    try {
      return stored_weights(weights_.raw_data(), memory::desc(s.weights, dt::s8, tag::oihw),
                            primitive_desc(s).weights_desc());
    } catch (const dnnl::error& e) {
      return layer_status(node_, e);
    }
  }

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    KILN_ASSIGN_OR_RETURN(shapes_, qconv_shapes(node_, in[0].dims, in[1].dims, out[0].dims));
    KILN_RETURN_IF_ERROR(prepare_epilogue());
    OmpThreads threads(thread_pool());
    try {
      const auto pd = primitive_desc(shapes_);
      if (!weights_.defined()) return layer_status(node_, "needs constant weights");
      Status st =
          prepacked_ != nullptr
              ? packed_.adopt(*prepacked_, pd.weights_desc())
              : packed_.pack(weights_.raw_data(), memory::desc(shapes_.weights, dt::s8, tag::oihw),
                             pd.weights_desc());
      if (!st.is_ok()) return layer_status(node_, st.message());
      exec_.init(dnnl::convolution_forward(pd), pd.scratchpad_desc());
      src_ = exec_.add(DNNL_ARG_SRC, pd.src_desc());
      exec_.bind(exec_.add(DNNL_ARG_WEIGHTS, pd.weights_desc()), packed_.data());
      exec_.bind(exec_.add(DNNL_ARG_BIAS, pd.bias_desc()), bias_.data());
      dst_ = exec_.add(DNNL_ARG_DST, pd.dst_desc());
      const memory::desc zp({1}, dt::s32, tag::x);
      exec_.bind(exec_.add(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zp), &x_zero_);
      exec_.bind(exec_.add(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, zp), &y_zero_);
    } catch (const dnnl::error& e) {
      return layer_status(node_, e);
    }
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    OmpThreads threads(thread_pool());
    exec_.bind(src_, in[0].data);
    exec_.bind(dst_, out[0].data);
    if (residual_) {
      // The sum post-op adds what Y holds: the residual, unless it already is Y (in place).
      const TensorView& z = in[kQResidualInput];
      if (z.data != out[0].data) std::memcpy(out[0].data, z.data, out[0].nbytes());
    }
    return exec_.execute();
  }

  // The node's output scales, bias (in accumulator units) and zero points in oneDNN's terms (the
  // file's comment), for attr() and the bias and zero-point arguments.
  Status prepare_epilogue() {
    const ir::Attributes& a = node_.attrs;
    const float x_scale = a.get_float("x_scale", 1.0f), y_scale = a.get_float("y_scale", 1.0f);
    const auto m = static_cast<size_t>(w_scale_.numel());
    scales_.assign(m, 0.0f);
    bias_.assign(m, 0.0f);
    for (size_t c = 0; c < m; ++c) {
      const float s = x_scale * w_scale_.data<float>()[c];
      scales_[c] = s / y_scale;
      const float b = bias_in_.defined() ? bias_in_.data<float>()[c] : 0.0f;
      if (b != 0.0f && s == 0.0f) {
        return layer_status(node_, fmt::format("channel {} has a bias but a zero scale", c));
      }
      bias_[c] = b == 0.0f ? 0.0f : b / s;
    }
    x_zero_ = static_cast<int32_t>(a.get_int("x_zero_point", 0));
    y_zero_ = static_cast<int32_t>(a.get_int("y_zero_point", 0));
    return Status::ok();
  }

  // The epilogue as a primitive_attr, from prepare_epilogue()'s scales.
  dnnl::primitive_attr attr() const {
    const ir::Attributes& a = node_.attrs;
    const float y_scale = a.get_float("y_scale", 1.0f);
    dnnl::primitive_attr attr = base_attr();
    attr.set_output_scales(2, scales_);
    attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
    attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
    dnnl::post_ops ops;
    if (residual_) {
      ops.append_sum(a.get_float("z_scale", 1.0f) / y_scale,
                     static_cast<int32_t>(a.get_int("z_zero_point", 0)), dt::u8);
    }
    ref::ActivationParams act = activation_of(node_);
    if (act.kind == ref::Activation::kClip) {
      act.alpha /= y_scale;
      act.beta /= y_scale;
    }
    append_activation(act, ops);
    attr.set_post_ops(ops);
    return attr;
  }

 private:
  dnnl::convolution_forward::primitive_desc primitive_desc(const QConvShapes& s) {
    const dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        memory::desc(s.src, dt::u8, tag::nhwc), memory::desc(s.weights, dt::s8, tag::any),
        memory::desc(s.bias, dt::f32, tag::x), memory::desc(s.dst, dt::u8, tag::nhwc), s.strides,
        s.dilates, s.pad_l, s.pad_r);
    dnnl::convolution_forward::primitive_desc pd(desc, attr(), cpu_engine());
    if (impl_ == QImpl::kJit) {
      while (!std::string_view(pd.impl_info_str()).starts_with("jit_int8")) {
        if (!pd.next_impl()) {
          throw dnnl::error(dnnl_unimplemented, "oneDNN has no jit_int8 kernel for this layer");
        }
      }
    }
    return pd;
  }

  const ir::Node& node_;
  const Tensor* prepacked_;
  QImpl impl_;
  Tensor weights_, w_scale_, bias_in_;
  bool residual_ = false;
  QConvShapes shapes_;
  std::vector<float> scales_, bias_;  // prepare_epilogue()'s
  int32_t x_zero_ = 0, y_zero_ = 0;
  PackedWeights packed_;
  Exec exec_;
  int src_ = -1, dst_ = -1;
};

constexpr size_t kQConvWeightsInput[] = {1};

class QConvNhwcTactic final : public OnednnTactic {
 public:
  QConvNhwcTactic(std::string_view name, QImpl impl)
      : OnednnTactic(name, "kiln", "QConvNhwc"), impl_(impl) {}
  // Measured where oneDNN has its VNNI kernels (the layout pass asks for it through this).
  uint64_t required_features() const override { return kIsaAvx512Vnni; }
  // The sum post-op adds what Y holds (the residual, copied there unless it is Y).
  bool residual_in_place() const override { return true; }
  std::string why_not(const LayerSpec& spec) const override {
    if (spec.constant(1) == nullptr) return "needs constant weights";
    return epilogue_why_not(spec);
  }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    if (spec.prepacked != nullptr)
      KILN_RETURN_IF_ERROR(check_stored_weights(*spec.node, *spec.prepacked));
    return std::unique_ptr<LayerKernel>(std::make_unique<QConvNhwcKernel>(spec, impl_));
  }
  Result<Tensor> prepack(const LayerSpec& spec) const override {
    LayerSpec own = spec;
    own.prepacked = nullptr;
    return QConvNhwcKernel(own, impl_).prepack(own);
  }
  std::span<const size_t> packed_inputs() const override { return kQConvWeightsInput; }

 private:
  QImpl impl_;
};

}  // namespace

const Tactic& qconv_nhwc_tactic() {
  static const QConvNhwcTactic tactic("onednn.qconv_nhwc.u8s8", QImpl::kFirst);
  return tactic;
}

const Tactic& qconv_nhwc_jit_tactic() {
  static const QConvNhwcTactic tactic("onednn.qconv_nhwc_jit.u8s8", QImpl::kJit);
  return tactic;
}

}  // namespace kiln::tactics::onednn
