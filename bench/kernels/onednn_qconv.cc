#include "kernels/onednn_qconv.h"

#include <fmt/format.h>
#include <omp.h>

#include <dnnl.hpp>

namespace kiln::bench {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

struct OnednnQConv::State {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{eng};
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward conv;
  memory src, weights, bias, dst;
  memory::dims dst_dims;
  int threads = 1;
};

namespace {

const Tensor* constant_input(const ir::Graph& g, const ir::Node& n, size_t i) {
  if (i >= n.inputs.size()) return nullptr;
  const ir::Value& v = g.value(n.inputs[i]);
  return v.initializer ? &*v.initializer : nullptr;
}

// kiln.QConv's attributes as oneDNN's: the scale per output channel x_scale * w_scale / y_scale,
// the bias in accumulator units (oneDNN adds it before scaling), ReLU as a post-op.
Result<dnnl::primitive_attr> qconv_attr(const ir::Node& n, const Tensor& w_scale) {
  const ir::Attributes& a = n.attrs;
  if (a.get_int("x_zero_point", 0) != 0 || a.get_int("y_zero_point", 0) != 0) {
    return unsupported("node '{}': the oneDNN peer takes zero points of 0 only", n.name);
  }
  const std::string act = a.get_string("activation", "");
  if (!act.empty() && act != "Relu") {
    return unsupported("node '{}': the oneDNN peer takes no activation or Relu, not {}", n.name,
                       act);
  }
  const float ratio = a.get_float("x_scale", 1.f) / a.get_float("y_scale", 1.f);
  std::vector<float> scales(static_cast<size_t>(w_scale.numel()));
  for (size_t m = 0; m < scales.size(); ++m) scales[m] = ratio * w_scale.data<float>()[m];
  dnnl::primitive_attr attr;
  attr.set_output_scales(2, scales);
  if (act == "Relu") {
    dnnl::post_ops po;
    po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    attr.set_post_ops(po);
  }
  return attr;
}

}  // namespace

Result<std::unique_ptr<OnednnQConv>> OnednnQConv::make(const ir::Graph& g, const uint8_t* x_nchw,
                                                       int threads) {
  const ir::Node& n = g.nodes.front();
  const Tensor* w = constant_input(g, n, 1);
  const Tensor* w_scale = constant_input(g, n, 2);
  const Tensor* b = constant_input(g, n, 3);
  if (n.op_type != "QConv" || w == nullptr || w_scale == nullptr ||
      n.attrs.get_int("group", 1) != 1) {
    return unsupported("node '{}': the oneDNN peer takes kiln.QConv of one group", n.name);
  }
  KILN_ASSIGN_OR_RETURN(dnnl::primitive_attr attr, qconv_attr(n, *w_scale));
  const Dims& xd = g.value(n.inputs[0]).desc.static_dims();
  const Dims& yd = g.value(n.outputs[0]).desc.static_dims();
  const Dims& wd = w->dims();
  const std::vector<int64_t> strides = n.attrs.get_ints("strides", {1, 1});
  const std::vector<int64_t> pads = n.attrs.get_ints("pads", {0, 0, 0, 0});
  const std::vector<int64_t> dil = n.attrs.get_ints("dilations", {1, 1});
  auto s = std::make_unique<State>();
  s->threads = threads;
  omp_set_num_threads(threads);  // oneDNN plans its split at creation
  const memory::dims src{xd[0], xd[1], xd[2], xd[3]}, wts{wd[0], wd[1], wd[2], wd[3]}, bia{wd[0]};
  s->dst_dims = {yd[0], yd[1], yd[2], yd[3]};
  const dnnl::convolution_forward::desc desc(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
      memory::desc(src, dt::u8, tag::nhwc), memory::desc(wts, dt::s8, tag::any),
      memory::desc(bia, dt::f32, tag::x), memory::desc(s->dst_dims, dt::u8, tag::nhwc),
      {strides[0], strides[1]}, {dil[0] - 1, dil[1] - 1}, {pads[0], pads[1]}, {pads[2], pads[3]});
  s->pd = dnnl::convolution_forward::primitive_desc(desc, attr, s->eng);
  s->conv = dnnl::convolution_forward(s->pd);
  s->src = memory(s->pd.src_desc(), s->eng);
  s->weights = memory(s->pd.weights_desc(), s->eng);
  s->bias = memory(s->pd.bias_desc(), s->eng);
  s->dst = memory(s->pd.dst_desc(), s->eng);
  // The user's tensors (NCHW input, OIHW weights) reordered in once.
  memory x_user({src, dt::u8, tag::nchw}, s->eng, const_cast<uint8_t*>(x_nchw));
  memory w_user({wts, dt::s8, tag::oihw}, s->eng, const_cast<int8_t*>(w->data<int8_t>()));
  dnnl::reorder(x_user, s->src).execute(s->stream, x_user, s->src);
  dnnl::reorder(w_user, s->weights).execute(s->stream, w_user, s->weights);
  s->stream.wait();
  auto* bias = static_cast<float*>(s->bias.get_data_handle());
  const float x_scale = n.attrs.get_float("x_scale", 1.f);
  for (int64_t m = 0; m < wd[0]; ++m) {
    const float b_m = b != nullptr ? b->data<float>()[m] : 0.f;
    bias[m] = b_m / (x_scale * w_scale->data<float>()[m]);
  }
  return std::unique_ptr<OnednnQConv>(new OnednnQConv(std::move(s)));
}

OnednnQConv::OnednnQConv(std::unique_ptr<State> s) : s_(std::move(s)) {}
OnednnQConv::~OnednnQConv() = default;

std::string OnednnQConv::impl() const { return s_->pd.impl_info_str(); }

void OnednnQConv::run() {
  omp_set_num_threads(s_->threads);
  s_->conv.execute(s_->stream, {{DNNL_ARG_SRC, s_->src},
                                {DNNL_ARG_WEIGHTS, s_->weights},
                                {DNNL_ARG_BIAS, s_->bias},
                                {DNNL_ARG_DST, s_->dst}});
  s_->stream.wait();
}

std::vector<uint8_t> OnednnQConv::output_nchw() {
  const memory::dims& d = s_->dst_dims;
  std::vector<uint8_t> out(static_cast<size_t>(d[0] * d[1] * d[2] * d[3]));
  memory user({d, dt::u8, tag::nchw}, s_->eng, out.data());
  dnnl::reorder(s_->dst, user).execute(s_->stream, s_->dst, user);
  s_->stream.wait();
  return out;
}

}  // namespace kiln::bench
