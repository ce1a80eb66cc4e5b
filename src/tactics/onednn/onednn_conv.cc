// Conv and kiln.FusedConv on oneDNN's convolution primitive: plain NCHW (NCW, NCDHW) source and
// destination, constant weights reordered once into the primitive's preferred layout, the bias as
// the primitive's bias, the fused residual as a sum post-op and the activation as eltwise post-ops,
// in that order: act(conv + bias + residual), as kiln.FusedConv defines it.
//
// The Winograd tactics run oneDNN's Winograd convolution (F(2x2,3x3) or F(4x4,3x3), oneDNN picks)
// for 3x3 stride-1 layers. oneDNN 2.6 implements it only on its blocked activation layout
// (nChw16c), so those kernels reorder the source in and the result out around the primitive; the
// tuner's timing includes both reorders.
//
// The nChw16c tactics run kiln.ConvNchw16c (ops/kiln_layout.h): the source, destination and
// residual are already in oneDNN's nChw16c layout (kiln's blocked layout is the same), so the
// direct and the Winograd primitive read and write them in place, with no reorders.
//
// The sliced Winograd tactics split the output channels over kiln's pool instead of OpenMP's: each
// pool thread runs a primitive of its own (made for one OpenMP thread) on its slice, with its own
// reorders, the source's included. On 2 threads oneDNN's own split of a Winograd layer ran
// 1.1-1.2x faster than on one (ResNet-50's 28x28 and 14x14 layers): its transforms and GEMMs are
// separate parallel regions, each a synchronization of the team (measured when kiln set libgomp's
// passive wait, each region then woke a sleeping worker). The slices duplicate the source's
// reorder and transform; the tuner times both.

#include <fmt/format.h>

#include <cstring>
#include <optional>

#include "base/cpu_features.h"
#include "ops/kiln_layout.h"
#include "ops/nn_conv.h"
#include "tactics/onednn/onednn_common.h"
#include "tactics/onednn/onednn_tactics.h"

namespace kiln::tactics::onednn {
namespace {

namespace ref = kernels::ref;
using dnnl::memory;

// Which inputs feed the epilogue: X and W are inputs 0 and 1.
struct ConvWiring {
  int bias_input = 2;       // -1: none
  int residual_input = -1;  // a tensor of Y's shape added after the bias; -1: none
  ref::ActivationParams activation;
};

// Float32 `dims` in whatever layout the primitive prefers.
memory::desc any_desc(const memory::dims& dims) {
  return memory::desc(dims, memory::data_type::f32, memory::format_tag::any);
}

// The descriptors of one convolution with concrete shapes.
struct ConvShapes {
  memory::dims src, weights, bias, dst;
  memory::dims strides, dilates, pad_l, pad_r;
};

Result<ConvShapes> conv_shapes(const ir::Node& node, int since_version,
                               std::span<const int64_t> x_dims, std::span<const int64_t> w_dims) {
  const ops::NodeContext ctx(node, since_version);
  const Tensor x =
      Tensor::borrow(DType::kF32, Dims(x_dims.begin(), x_dims.end()), nullptr, nullptr);
  const Tensor w =
      Tensor::borrow(DType::kF32, Dims(w_dims.begin(), w_dims.end()), nullptr, nullptr);
  KILN_ASSIGN_OR_RETURN(const ref::ConvParams p, ops::conv_kernel_params(ctx, x, w));
  ConvShapes s;
  s.src = {p.batch, p.in_channels};
  s.dst = {p.batch, p.out_channels};
  if (p.group > 1) {
    s.weights = {p.group, p.out_channels / p.group, p.in_channels / p.group};
  } else {
    s.weights = {p.out_channels, p.in_channels};
  }
  s.bias = {p.out_channels};
  for (size_t d = 0; d < p.in_dims.size(); ++d) {
    s.src.push_back(p.in_dims[d]);
    s.dst.push_back(p.out_dims[d]);
    s.weights.push_back(p.kernel[d]);
    s.strides.push_back(p.strides[d]);
    s.dilates.push_back(p.dilations[d] - 1);
    s.pad_l.push_back(p.pads_begin[d]);
    s.pad_r.push_back(exact_end_pad(p.in_dims[d], p.out_dims[d], p.kernel[d], p.strides[d],
                                    p.dilations[d], p.pads_begin[d]));
  }
  return s;
}

// Activations in the layouts a primitive chose (format_tag::any), converted from and to kiln's
// plain layout at the layer's boundaries, through buffers the kernel owns.
class BlockedBoundary {
 public:
  void init(const memory::desc& plain_src, const memory::desc& src, const memory::desc& plain_dst,
            const memory::desc& dst) {
    src_ = Tensor(DType::kU8, {static_cast<int64_t>(std::max<size_t>(src.get_size(), 1))});
    dst_ = Tensor(DType::kU8, {static_cast<int64_t>(std::max<size_t>(dst.get_size(), 1))});
    init_reorder(src_in_, plain_src, src, src_.raw_data(), true);
    init_reorder(dst_in_, plain_dst, dst, dst_.raw_data(), true);
    init_reorder(dst_out_, dst, plain_dst, dst_.raw_data(), false);
  }
  void* src() { return src_.raw_data(); }
  void* dst() { return dst_.raw_data(); }
  Status load_src(const void* plain) { return run(src_in_, plain); }
  Status load_dst(const void* plain) { return run(dst_in_, plain); }  // a residual to sum onto
  Status store_dst(void* plain) { return run(dst_out_, plain); }

 private:
  struct Reorder {
    Exec exec;
    int plain_slot = -1;
  };
  // `plain` is the reorder's source (to_blocked) or destination; `blocked` its other side.
  static void init_reorder(Reorder& r, const memory::desc& from, const memory::desc& to,
                           void* blocked, bool to_blocked) {
    const dnnl::reorder::primitive_desc pd(cpu_engine(), from, cpu_engine(), to, base_attr());
    r.exec.init(dnnl::reorder(pd), pd.scratchpad_desc());
    const int from_slot = r.exec.add(DNNL_ARG_FROM, from);
    const int to_slot = r.exec.add(DNNL_ARG_TO, to);
    r.plain_slot = to_blocked ? from_slot : to_slot;
    r.exec.bind(to_blocked ? to_slot : from_slot, blocked);
  }
  static Status run(Reorder& r, const void* plain) {
    r.exec.bind(r.plain_slot, plain);
    return r.exec.execute();
  }

  Tensor src_, dst_;
  Reorder src_in_, dst_in_, dst_out_;
};

// How a convolution tactic runs.
enum class ConvAlgo {
  kDirect,          // oneDNN's direct convolution, on plain layouts
  kWinograd,        // oneDNN's Winograd on its blocked layout, split by OpenMP
  kWinogradSlices,  // one Winograd primitive per slice of output channels, split by kiln's pool
};

// Output channels [oc0, oc0 + n) of a sliced Winograd layer: a primitive made for one OpenMP
// thread, its packed weights, and its blocked buffers and reorders (the whole source in, its
// channels of the residual in and of the result out).
struct WinogradSlice {
  int64_t oc0 = 0;
  PackedWeights packed;
  BlockedBoundary boundary;
  Exec exec;
  int bias = -1;
  Status status;  // of its part of the last run
};

// X's dims with its real channel count when it is blocked ([N, C rounded up to 16, H, W]): W's
// dim 1 x group.
memory::dims unblocked_x(std::span<const int64_t> x, std::span<const int64_t> w, int64_t group,
                         bool blocked) {
  memory::dims d(x.begin(), x.end());
  if (blocked && d.size() > 1 && w.size() > 1) d[1] = w[1] * group;
  return d;
}

class ConvKernel final : public LayerKernel {
 public:
  ConvKernel(const LayerSpec& spec, const ConvWiring& wiring, ConvAlgo algo, bool blocked)
      : node_(*spec.node),
        since_version_(spec.since_version),
        wiring_(wiring),
        winograd_(algo != ConvAlgo::kDirect),
        sliced_(algo == ConvAlgo::kWinogradSlices),
        blocked_(blocked),
        plain_src_(blocked && node_.attrs.get_string("x_layout", "") == "nchw") {
    if (const Tensor* w = spec.constant(1)) weights_ = *w;  // shares the engine's storage
    prepacked_ = spec.prepacked;
  }

  // The weights as the engine stores them (stored_weights), packed for a batch of 1 when the batch
  // is dynamic (a context whose primitive wants another layout reorders them); empty for other
  // dynamic dims, the Winograd tactics and FP16 layers (packed when the engine loads).
  Result<Tensor> prepack(const LayerSpec& spec) {
    if (winograd_ || spec.fp16_weights) return Tensor();
    KILN_ASSIGN_OR_RETURN(std::optional<ConvShapes> s, static_shapes(spec));
    if (!s) return Tensor();
    OmpThreads threads(nullptr);
    try {
      return stored_weights(weights_.raw_data(), plain_desc(s->weights),
                            primitive_desc(*s).weights_desc());
    } catch (const dnnl::error& e) {
      return layer_status(node_, e);
    }
  }

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    KILN_ASSIGN_OR_RETURN(shapes_,
                          conv_shapes(node_, since_version_, x_dims(in[0].dims), in[1].dims));
    const memory::dims y(out[0].dims.begin(), out[0].dims.end());
    if (y != shapes_.dst) {
      return internal_error("node '{}' ({}): output is [{}] but the convolution gives [{}]",
                            node_.name, node_.op_type, fmt::join(y, ","),
                            fmt::join(shapes_.dst, ","));
    }
    slices_.clear();
    if (sliced_ && thread_pool() != nullptr && thread_pool()->size() > 1) return reshape_slices();
    OmpThreads threads(thread_pool());
    try {
      const auto pd = primitive_desc(shapes_);
      if (weights_.defined()) KILN_RETURN_IF_ERROR(pack(shapes_.weights, pd.weights_desc()));
      exec_.init(dnnl::convolution_forward(pd), pd.scratchpad_desc());
      src_ = exec_.add(DNNL_ARG_SRC, pd.src_desc());
      weights_slot_ = exec_.add(DNNL_ARG_WEIGHTS, pd.weights_desc());
      if (has_bias()) bias_ = exec_.add(DNNL_ARG_BIAS, pd.bias_desc());
      dst_ = exec_.add(DNNL_ARG_DST, pd.dst_desc());
      if (weights_.defined()) exec_.bind(weights_slot_, packed_.data());
      if (winograd_ && !blocked_) {
        boundary_.init(plain_desc(shapes_.src), pd.src_desc(), plain_desc(shapes_.dst),
                       pd.dst_desc());
        exec_.bind(src_, boundary_.src());
        exec_.bind(dst_, boundary_.dst());
      }
    } catch (const dnnl::error& e) {
      return layer_status(node_, e);
    }
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    if (!slices_.empty()) return run_slices(in, out);
    OmpThreads threads(thread_pool());
    if (winograd_ && !blocked_) return run_blocked(in, out);
    exec_.bind(src_, in[0].data);
    if (!weights_.defined()) exec_.bind(weights_slot_, in[1].data);
    if (has_bias()) exec_.bind(bias_, in[static_cast<size_t>(wiring_.bias_input)].data);
    exec_.bind(dst_, out[0].data);
    if (wiring_.residual_input >= 0) {
      // The sum post-op adds what Y holds: the residual, unless it already is Y (in place).
      const TensorView& r = in[static_cast<size_t>(wiring_.residual_input)];
      if (r.data != out[0].data) std::memcpy(out[0].data, r.data, out[0].nbytes());
    }
    return exec_.execute();
  }

 private:
  bool has_bias() const { return wiring_.bias_input >= 0; }

  // The convolution's shapes when X's are static but for a dynamic batch (taken as 1), else
  // nullopt.
  Result<std::optional<ConvShapes>> static_shapes(const LayerSpec& spec) const {
    const std::optional<Dims> x = known_dims(spec.inputs[0], /*any_batch=*/true);
    if (sliced_ || !weights_.defined() || !x) return std::optional<ConvShapes>();
    KILN_ASSIGN_OR_RETURN(ConvShapes s,
                          conv_shapes(node_, since_version_, x_dims(*x), weights_.dims()));
    return std::optional<ConvShapes>(std::move(s));
  }

  // The constant weights (logical dims w: grouped ones have a group dim) packed as `to`: the
  // engine's copy when it has one, else from the values.
  Status pack(const memory::dims& w, const memory::desc& to) {
    Status st = prepacked_ != nullptr ? packed_.adopt(*prepacked_, to)
                                      : packed_.pack(weights_.raw_data(), plain_desc(w), to);
    return st.is_ok() ? st : layer_status(node_, st.message());
  }

  memory::dims x_dims(std::span<const int64_t> x) const {
    return unblocked_x(x, weights_.defined() ? weights_.dims() : Dims{},
                       node_.attrs.get_int("group", 1), blocked_);
  }

  Status run_blocked(std::span<const TensorView> in, std::span<const TensorView> out) {
    KILN_RETURN_IF_ERROR(boundary_.load_src(in[0].data));
    if (has_bias()) exec_.bind(bias_, in[static_cast<size_t>(wiring_.bias_input)].data);
    if (wiring_.residual_input >= 0) {
      KILN_RETURN_IF_ERROR(
          boundary_.load_dst(in[static_cast<size_t>(wiring_.residual_input)].data));
    }
    KILN_RETURN_IF_ERROR(exec_.execute());
    return boundary_.store_dst(out[0].data);
  }

  // One slice per pool thread, in whole 16-channel blocks (oneDNN's nChw16c), so no slice's
  // channels share a block with another's.
  Status reshape_slices() {
    const int64_t oc = shapes_.dst[1];
    const int64_t blocks = (oc + 15) / 16;
    const int64_t count = std::min<int64_t>(thread_pool()->size(), blocks);
    const int64_t w_per_channel = weights_.numel() / oc;
    OmpThreads one(nullptr);  // a slice's primitive runs on one OpenMP thread: its pool thread
    try {
      for (int64_t i = 0; i < count; ++i) {
        auto slice = std::make_unique<WinogradSlice>();
        slice->oc0 = blocks * i / count * 16;
        const int64_t n = std::min(blocks * (i + 1) / count * 16, oc) - slice->oc0;
        ConvShapes s = shapes_;
        s.dst[1] = s.weights[0] = s.bias[0] = n;
        const auto pd = primitive_desc(s);
        KILN_RETURN_IF_ERROR(slice->packed.pack(
            static_cast<const float*>(weights_.raw_data()) + slice->oc0 * w_per_channel,
            plain_desc(s.weights), pd.weights_desc()));
        slice->exec.init(dnnl::convolution_forward(pd), pd.scratchpad_desc());
        const int src = slice->exec.add(DNNL_ARG_SRC, pd.src_desc());
        const int weights = slice->exec.add(DNNL_ARG_WEIGHTS, pd.weights_desc());
        if (has_bias()) slice->bias = slice->exec.add(DNNL_ARG_BIAS, pd.bias_desc());
        const int dst = slice->exec.add(DNNL_ARG_DST, pd.dst_desc());
        slice->exec.bind(weights, slice->packed.data());
        memory::dims offsets(s.dst.size(), 0);
        offsets[1] = slice->oc0;
        slice->boundary.init(plain_desc(shapes_.src), pd.src_desc(),
                             plain_desc(shapes_.dst).submemory_desc(s.dst, offsets), pd.dst_desc());
        slice->exec.bind(src, slice->boundary.src());
        slice->exec.bind(dst, slice->boundary.dst());
        slices_.push_back(std::move(slice));
      }
    } catch (const dnnl::error& e) {
      return layer_status(node_, e);
    }
    return Status::ok();
  }

  Status run_slices(std::span<const TensorView> in, std::span<const TensorView> out) {
    thread_pool()->parallel_for(static_cast<int64_t>(slices_.size()), 1,
                                [&](int64_t begin, int64_t end) {
                                  OmpThreads one(nullptr);
                                  for (int64_t i = begin; i < end; ++i) {
                                    slices_[i]->status = run_slice(*slices_[i], in, out);
                                  }
                                });
    for (const auto& slice : slices_) KILN_RETURN_IF_ERROR(slice->status);
    return Status::ok();
  }

  // The slice's plain side of the residual and result reorders is a view of its channels, so
  // they take the tensors' own pointers; an in-place residual is read before the same channels
  // are written.
  Status run_slice(WinogradSlice& s, std::span<const TensorView> in,
                   std::span<const TensorView> out) {
    KILN_RETURN_IF_ERROR(s.boundary.load_src(in[0].data));
    if (has_bias()) {
      const auto* bias =
          static_cast<const float*>(in[static_cast<size_t>(wiring_.bias_input)].data);
      s.exec.bind(s.bias, bias + s.oc0);
    }
    if (wiring_.residual_input >= 0) {
      KILN_RETURN_IF_ERROR(
          s.boundary.load_dst(in[static_cast<size_t>(wiring_.residual_input)].data));
    }
    KILN_RETURN_IF_ERROR(s.exec.execute());
    return s.boundary.store_dst(out[0].data);
  }

  dnnl::convolution_forward::primitive_desc primitive_desc(const ConvShapes& s) const {
    const memory::desc weights_md =
        weights_.defined() ? any_desc(s.weights) : plain_desc(s.weights);
    const auto kind = dnnl::prop_kind::forward_inference;
    const auto alg =
        winograd_ ? dnnl::algorithm::convolution_winograd : dnnl::algorithm::convolution_direct;
    const auto layout = [&](const memory::dims& d) {
      if (blocked_) return memory::desc(d, memory::data_type::f32, memory::format_tag::nChw16c);
      return winograd_ ? any_desc(d) : plain_desc(d);
    };
    const memory::desc src = plain_src_ ? plain_desc(s.src) : layout(s.src);
    const memory::desc dst = layout(s.dst);
    const auto desc =
        has_bias() ? dnnl::convolution_forward::desc(kind, alg, src, weights_md, plain_desc(s.bias),
                                                     dst, s.strides, s.dilates, s.pad_l, s.pad_r)
                   : dnnl::convolution_forward::desc(kind, alg, src, weights_md, dst, s.strides,
                                                     s.dilates, s.pad_l, s.pad_r);
    dnnl::post_ops ops;
    if (wiring_.residual_input >= 0) ops.append_sum(1.0f);
    append_activation(wiring_.activation, ops);
    dnnl::primitive_attr attr = base_attr();
    attr.set_post_ops(ops);
    return dnnl::convolution_forward::primitive_desc(desc, attr, cpu_engine());
  }

  const ir::Node& node_;
  int since_version_;
  ConvWiring wiring_;
  bool winograd_ = false;
  bool sliced_ = false;
  bool blocked_ = false;               // kiln.ConvNchw16c: X, Y and the residual are nChw16c
  bool plain_src_ = false;             // ... but X is NCHW (x_layout "nchw")
  Tensor weights_;                     // the constant weights, or undefined
  const Tensor* prepacked_ = nullptr;  // the engine's packed weights (prepack()), or null
  BlockedBoundary boundary_;           // Winograd: the blocked source and destination
  PackedWeights packed_;
  ConvShapes shapes_;
  Exec exec_;
  int src_ = -1, weights_slot_ = -1, bias_ = -1, dst_ = -1;
  std::vector<std::unique_ptr<WinogradSlice>> slices_;  // sliced, on a pool of 2+ threads
};

std::string conv_why_not(const LayerSpec& spec) {
  std::string why = require_f32(spec);
  if (why.empty()) why = require_rank(spec, 0, 3, 5);
  if (why.empty()) why = require_rank(spec, 1, spec.inputs[0].rank(), spec.inputs[0].rank());
  return why;
}

// "" for the layers oneDNN's Winograd takes: 2-D, 3x3, stride 1, no dilation, no groups, constant
// weights.
std::string winograd_why_not(const LayerSpec& spec) {
  std::string why = conv_why_not(spec);
  if (!why.empty()) return why;
  const ir::TensorDesc& w = spec.inputs[1];
  if (w.rank() != 4 || w.dim(2).value != 3 || w.dim(3).value != 3) {
    return "Winograd takes 2-D 3x3 kernels only";
  }
  if (spec.constant(1) == nullptr) return "Winograd needs constant weights";
  const ir::Attributes& a = spec.node->attrs;
  if (a.get_int("group", 1) != 1) return "Winograd takes ungrouped convolutions only";
  for (const char* attr : {"strides", "dilations"}) {
    for (int64_t v : a.get_ints(attr, {})) {
      if (v != 1) return fmt::format("Winograd needs {} of 1", attr);
    }
  }
  return "";
}

Result<std::unique_ptr<LayerKernel>> make_conv_kernel(const LayerSpec& spec,
                                                      const ConvWiring& wiring, ConvAlgo algo,
                                                      bool blocked = false) {
  if (spec.prepacked != nullptr)
    KILN_RETURN_IF_ERROR(check_stored_weights(*spec.node, *spec.prepacked));
  return std::unique_ptr<LayerKernel>(std::make_unique<ConvKernel>(spec, wiring, algo, blocked));
}

// The weights the engine stores for a direct convolution (ConvKernel::prepack).
Result<Tensor> prepack_conv(const LayerSpec& spec, const ConvWiring& wiring, ConvAlgo algo,
                            bool blocked = false) {
  if (algo != ConvAlgo::kDirect) return Tensor();
  LayerSpec own = spec;
  own.prepacked = nullptr;
  return ConvKernel(own, wiring, algo, blocked).prepack(own);
}

// W, the input a direct convolution's stored weights replace.
constexpr size_t kWeightsInput[] = {1};

std::span<const size_t> conv_packed_inputs(ConvAlgo algo) {
  return algo == ConvAlgo::kDirect ? std::span<const size_t>(kWeightsInput)
                                   : std::span<const size_t>();
}

// A FusedConv-shaped node's inputs (X, W, B?, residual?) and its fused activation.
ConvWiring fused_wiring(const LayerSpec& spec) {
  ConvWiring wiring;
  wiring.bias_input = spec.has_input(2) ? 2 : -1;
  wiring.residual_input = spec.has_input(3) ? 3 : -1;
  wiring.activation = activation_of(*spec.node);
  return wiring;
}

// "" when oneDNN can fuse the node's activation; its Winograd primitive takes ReLU only.
std::string fused_activation_why_not(const LayerSpec& spec, bool winograd) {
  std::string why = activation_why_not(*spec.node);
  const ref::Activation act = activation_of(*spec.node).kind;
  if (why.empty() && winograd && act != ref::Activation::kNone && act != ref::Activation::kRelu) {
    why = fmt::format("oneDNN's Winograd fuses ReLU only, not {}", ref::activation_name(act));
  }
  return why;
}

class ConvTactic final : public OnednnTactic {
 public:
  ConvTactic(std::string_view name, ConvAlgo algo)
      : OnednnTactic(name, "", "Conv"), algo_(algo), winograd_(algo != ConvAlgo::kDirect) {}
  uint64_t required_features() const override { return winograd_ ? kIsaAvx512 : 0; }
  std::string why_not(const LayerSpec& spec) const override {
    return winograd_ ? winograd_why_not(spec) : conv_why_not(spec);
  }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    return make_conv_kernel(spec, wiring(spec), algo_);
  }
  Result<Tensor> prepack(const LayerSpec& spec) const override {
    return prepack_conv(spec, wiring(spec), algo_);
  }
  std::span<const size_t> packed_inputs() const override { return conv_packed_inputs(algo_); }

 private:
  static ConvWiring wiring(const LayerSpec& spec) {
    ConvWiring w;
    w.bias_input = spec.has_input(2) ? 2 : -1;
    return w;
  }

  ConvAlgo algo_;
  bool winograd_;
};

class FusedConvTactic final : public OnednnTactic {
 public:
  FusedConvTactic(std::string_view name, ConvAlgo algo)
      : OnednnTactic(name, "kiln", "FusedConv"),
        algo_(algo),
        winograd_(algo != ConvAlgo::kDirect) {}
  uint64_t required_features() const override { return winograd_ ? kIsaAvx512 : 0; }
  // The sum post-op adds what Y holds; the blocked paths read the residual (a slice's channels
  // of it) into their own buffer before Y (those channels) is written.
  bool residual_in_place() const override { return true; }
  std::string why_not(const LayerSpec& spec) const override {
    std::string why = winograd_ ? winograd_why_not(spec) : conv_why_not(spec);
    return why.empty() ? fused_activation_why_not(spec, winograd_) : why;
  }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    return make_conv_kernel(spec, fused_wiring(spec), algo_);
  }
  Result<Tensor> prepack(const LayerSpec& spec) const override {
    return prepack_conv(spec, fused_wiring(spec), algo_);
  }
  std::span<const size_t> packed_inputs() const override { return conv_packed_inputs(algo_); }

 private:
  ConvAlgo algo_;
  bool winograd_;
};

// kiln.ConvNchw16c, direct or Winograd, on 2-D layers whose channel counts are whole 16-channel
// blocks (so no padding lanes: their content is kiln's contract, not oneDNN's) and constant
// weights. Direct also takes an NCHW X of any channel count (x_layout "nchw": a first layer).
class BlockedConvTactic final : public OnednnTactic {
 public:
  BlockedConvTactic(std::string_view name, ConvAlgo algo)
      : OnednnTactic(name, "kiln", "ConvNchw16c"), algo_(algo) {}
  uint64_t required_features() const override { return kIsaAvx512; }
  // The sum post-op adds what Y holds (the residual, copied there unless it is Y).
  bool residual_in_place() const override { return true; }
  std::string why_not(const LayerSpec& spec) const override {
    std::string why = algo_ == ConvAlgo::kWinograd ? winograd_why_not(spec) : conv_why_not(spec);
    if (!why.empty()) return why;
    const Tensor* w = spec.constant(1);
    if (w == nullptr || w->rank() != 4) return "needs constant 2-D weights";
    const int64_t in = w->dims()[1] * spec.node->attrs.get_int("group", 1), out = w->dims()[0];
    const bool plain_x = spec.node->attrs.get_string("x_layout", "") == "nchw";
    if ((!plain_x && in % 16 != 0) || out % 16 != 0) {
      return fmt::format("{} -> {} channels: only whole 16-channel blocks", in, out);
    }
    if (plain_x && algo_ == ConvAlgo::kWinograd) return "Winograd needs a blocked X";
    if (spec.has_input(ops::kConvNchw16cScaleInput)) {
      return "oneDNN's convolution takes no channel scale on X (input 4)";
    }
    return fused_activation_why_not(spec, algo_ == ConvAlgo::kWinograd);
  }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    return make_conv_kernel(spec, fused_wiring(spec), algo_, /*blocked=*/true);
  }
  Result<Tensor> prepack(const LayerSpec& spec) const override {
    return prepack_conv(spec, fused_wiring(spec), algo_, /*blocked=*/true);
  }
  std::span<const size_t> packed_inputs() const override { return conv_packed_inputs(algo_); }

 private:
  ConvAlgo algo_;
};

}  // namespace

const Tactic& conv_nchw16c_tactic() {
  static const BlockedConvTactic tactic("onednn.conv_nchw16c.f32", ConvAlgo::kDirect);
  return tactic;
}

const Tactic& conv_nchw16c_winograd_tactic() {
  static const BlockedConvTactic tactic("onednn.conv_nchw16c_winograd.f32", ConvAlgo::kWinograd);
  return tactic;
}

const Tactic& conv_tactic() {
  static const ConvTactic tactic("onednn.conv.f32", ConvAlgo::kDirect);
  return tactic;
}

const Tactic& fused_conv_tactic() {
  static const FusedConvTactic tactic("onednn.fused_conv.f32", ConvAlgo::kDirect);
  return tactic;
}

const Tactic& conv_winograd_tactic() {
  static const ConvTactic tactic("onednn.conv_winograd.f32", ConvAlgo::kWinograd);
  return tactic;
}

const Tactic& fused_conv_winograd_tactic() {
  static const FusedConvTactic tactic("onednn.fused_conv_winograd.f32", ConvAlgo::kWinograd);
  return tactic;
}

const Tactic& conv_winograd_slices_tactic() {
  static const ConvTactic tactic("onednn.conv_winograd_slices.f32", ConvAlgo::kWinogradSlices);
  return tactic;
}

const Tactic& fused_conv_winograd_slices_tactic() {
  static const FusedConvTactic tactic("onednn.fused_conv_winograd_slices.f32",
                                      ConvAlgo::kWinogradSlices);
  return tactic;
}

}  // namespace kiln::tactics::onednn
