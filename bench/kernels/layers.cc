#include "kernels/layers.h"

#include <fmt/format.h>

#include <cmath>
#include <span>

#include "kernels/ref/layout.h"
#include "ops/infer_graph.h"

namespace kiln::bench {
namespace {

struct ConvShape {
  const char* model;
  int64_t c, k, hw, kernel, stride, group;
  const char* activation = "Relu";  // fused_conv's
  bool residual = false;            // fused_conv's residual input (ResNet's conv3 of a block)
  int64_t pad = -1;                 // -1: kernel / 2 (same-size output at stride 1)
};

Tensor ramp(Dims dims, float scale) {
  Tensor t(DType::kF32, std::move(dims));
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = scale * std::sin(0.37f * static_cast<float>(i));
  return t;
}

ir::ValueId constant(ir::Graph& g, const std::string& name, Tensor t) {
  ir::TensorDesc d = ir::TensorDesc::of_dims(t.dtype(), t.dims());
  const ir::ValueId v = g.add_value(name, d);
  g.value(v).initializer = std::move(t);
  return v;
}

// Int8 weights: the ramp's pattern over -127..127.
Tensor ramp_s8(Dims dims) {
  Tensor t(DType::kI8, std::move(dims));
  int8_t* p = t.data<int8_t>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    p[i] = static_cast<int8_t>(127.0f * std::sin(0.37f * static_cast<float>(i)));
  }
  return t;
}

Tensor filled(Dims dims, float v) {
  Tensor t(DType::kF32, std::move(dims));
  for (float& x : t.span<float>()) x = v;
  return t;
}

ir::ValueId input(ir::Graph& g, const std::string& name, Dims dims, DType dtype = DType::kF32) {
  const ir::ValueId v = g.add_value(name, ir::TensorDesc::of_dims(dtype, dims));
  g.value(v).is_graph_input = true;
  g.inputs.push_back(v);
  return v;
}

Result<BenchLayer> finish(std::string name, double flops, std::unique_ptr<ir::Graph> g,
                          bool int8 = false) {
  const ir::ValueId out = g->nodes.back().outputs[0];
  g->value(out).is_graph_output = true;
  g->outputs.push_back(out);
  g->opset_imports = {{"", 17}, {"kiln", 1}};
  for (ir::Node& n : g->nodes) n.opset = n.domain.empty() ? 17 : 1;
  Status s = ops::infer_graph_shapes(*g);
  if (!s.is_ok()) return s.with_context(name);
  return BenchLayer{std::move(name), flops, int8, 1, std::move(g)};
}

// kiln.FusedConv (conv + bias + ReLU): what a Conv + BN + ReLU of an exported model becomes; with
// `blocked`, the kiln.ConvNchw16c the layout pass makes of it (X, Y and the residual nChw16c; a
// first layer's few channels stay NCHW, x_layout "nchw", as the pass leaves them).
Result<BenchLayer> fused_conv(const ConvShape& s, bool blocked = false) {
  auto g = std::make_unique<ir::Graph>();
  const int64_t pad = s.pad >= 0 ? s.pad : s.kernel / 2;
  const int64_t out_hw = (s.hw + 2 * pad - s.kernel) / s.stride + 1;
  const auto channels = [&](int64_t c) { return blocked ? kernels::ref::padded_channels(c) : c; };
  const bool plain_x = blocked && s.c < 8;
  const ir::ValueId x = input(*g, "x", {1, plain_x ? s.c : channels(s.c), s.hw, s.hw});
  const ir::ValueId w = constant(*g, "w", ramp({s.k, s.c / s.group, s.kernel, s.kernel}, 0.05f));
  const ir::ValueId b = constant(*g, "b", ramp({s.k}, 0.1f));
  const ir::ValueId y = g->add_value("y");
  std::vector<ir::ValueId> inputs = {x, w, b};
  if (s.residual) inputs.push_back(input(*g, "r", {1, channels(s.k), out_hw, out_hw}));
  ir::Node n{.name = "conv",
             .op_type = blocked ? "ConvNchw16c" : "FusedConv",
             .domain = "kiln",
             .inputs = std::move(inputs),
             .outputs = {y}};
  n.attrs.set("kernel_shape", std::vector<int64_t>{s.kernel, s.kernel});
  n.attrs.set("strides", std::vector<int64_t>{s.stride, s.stride});
  n.attrs.set("pads", std::vector<int64_t>{pad, pad, pad, pad});
  n.attrs.set("group", s.group);
  n.attrs.set("activation", std::string(s.activation));
  if (plain_x) n.attrs.set("x_layout", std::string("nchw"));
  g->nodes.push_back(std::move(n));
  const double flops = 2.0 * static_cast<double>(s.k * (s.c / s.group) * s.kernel * s.kernel) *
                       static_cast<double>(out_hw * out_hw);
  const std::string name =
      s.group == 1 ? fmt::format("{}.conv{}x{}_s{}_{}to{}_{}{}{}", s.model, s.kernel, s.kernel,
                                 s.stride, s.c, s.k, s.hw, s.residual ? "_residual" : "",
                                 std::string_view(s.activation) == "Silu" ? "_silu" : "")
                   : fmt::format("{}.dwconv{}x{}_s{}_{}_{}", s.model, s.kernel, s.kernel, s.stride,
                                 s.c, s.hw);
  return finish(blocked ? name + "_nchw16c" : name, flops, std::move(g));
}

// The INT8 attributes of a layer between two uint8 tensors (ReLU outputs: zero point 0).
void set_int8_attrs(ir::Node& n, const char* in) {
  n.attrs.set(std::string(in) + "_scale", 0.02f);
  n.attrs.set(std::string(in) + "_zero_point", int64_t{0});
  n.attrs.set("output_type", int64_t{2});
  n.attrs.set("y_scale", 0.05f);
  n.attrs.set("y_zero_point", int64_t{0});
  n.attrs.set("activation", std::string("Relu"));
}

// kiln.QConv (uint8 -> uint8, bias, ReLU): what the same layer becomes in an INT8 engine; with
// `nhwc`, kiln.QConvNhwc, as passes/qconv_nhwc.cc makes it in a chain of channels-last layers.
// s.residual adds a uint8 residual (input 4, its own scale), as ResNet's block ends fuse it.
Result<BenchLayer> qconv(const ConvShape& s, bool nhwc = false) {
  auto g = std::make_unique<ir::Graph>();
  const int64_t pad = s.pad >= 0 ? s.pad : s.kernel / 2;
  const int64_t out_hw = (s.hw + 2 * pad - s.kernel) / s.stride + 1;
  const Dims x_dims = nhwc ? Dims{1, s.hw, s.hw, s.c} : Dims{1, s.c, s.hw, s.hw};
  const ir::ValueId x = input(*g, "x", x_dims, DType::kU8);
  const ir::ValueId w = constant(*g, "w", ramp_s8({s.k, s.c / s.group, s.kernel, s.kernel}));
  const ir::ValueId ws = constant(*g, "w_scale", filled({s.k}, 1e-3f));
  const ir::ValueId b = constant(*g, "b", ramp({s.k}, 0.1f));
  const ir::ValueId y = g->add_value("y");
  ir::Node n{.name = "qconv",
             .op_type = nhwc ? "QConvNhwc" : "QConv",
             .domain = "kiln",
             .inputs = {x, w, ws, b},
             .outputs = {y}};
  if (s.residual) {
    const Dims z_dims = nhwc ? Dims{1, out_hw, out_hw, s.k} : Dims{1, s.k, out_hw, out_hw};
    n.inputs.push_back(input(*g, "z", z_dims, DType::kU8));
    n.attrs.set("z_scale", 0.03f);
    n.attrs.set("z_zero_point", int64_t{0});
  }
  n.attrs.set("kernel_shape", std::vector<int64_t>{s.kernel, s.kernel});
  n.attrs.set("strides", std::vector<int64_t>{s.stride, s.stride});
  n.attrs.set("pads", std::vector<int64_t>{pad, pad, pad, pad});
  n.attrs.set("group", s.group);
  set_int8_attrs(n, "x");
  g->nodes.push_back(std::move(n));
  const double ops = 2.0 * static_cast<double>(s.k * (s.c / s.group) * s.kernel * s.kernel) *
                     static_cast<double>(out_hw * out_hw);
  const std::string name =
      s.group == 1
          ? fmt::format("{}.qconv{}{}x{}_s{}_{}to{}_{}{}", s.model, nhwc ? "_nhwc" : "", s.kernel,
                        s.kernel, s.stride, s.c, s.k, s.hw, s.residual ? "_residual" : "")
          : fmt::format("{}.qdwconv{}x{}_s{}_{}_{}", s.model, s.kernel, s.kernel, s.stride, s.c,
                        s.hw);
  return finish(name, ops, std::move(g), true);
}

// kiln.QGemm of uint8 activations [m, k] by int8 weights [k, n] (bias, ReLU, uint8 out).
Result<BenchLayer> qgemm(const char* name, int64_t m, int64_t k, int64_t n) {
  auto g = std::make_unique<ir::Graph>();
  const ir::ValueId a = input(*g, "a", {m, k}, DType::kU8);
  const ir::ValueId b = constant(*g, "b", ramp_s8({k, n}));
  const ir::ValueId bs = constant(*g, "b_scale", filled({n}, 1e-3f));
  const ir::ValueId c = constant(*g, "c", ramp({n}, 0.1f));
  const ir::ValueId y = g->add_value("y");
  ir::Node node{.name = "qgemm",
                .op_type = "QGemm",
                .domain = "kiln",
                .inputs = {a, b, bs, c},
                .outputs = {y}};
  set_int8_attrs(node, "a");
  g->nodes.push_back(std::move(node));
  return finish(name, 2.0 * static_cast<double>(m * k * n), std::move(g), true);
}

// MatMul of activations [m, k] by constant weights [k, n]: a transformer's projections.
Result<BenchLayer> matmul(const char* name, int64_t m, int64_t k, int64_t n) {
  auto g = std::make_unique<ir::Graph>();
  const ir::ValueId a = input(*g, "a", {m, k});
  const ir::ValueId b = constant(*g, "b", ramp({k, n}, 0.05f));
  const ir::ValueId y = g->add_value("y");
  g->nodes.push_back(
      ir::Node{.name = "matmul", .op_type = "MatMul", .inputs = {a, b}, .outputs = {y}});
  return finish(name, 2.0 * static_cast<double>(m * k * n), std::move(g));
}

// kiln.FusedGemm of activations [m, k] by constant weights [k, n] with a bias and `activation`
// ("" for none): a transformer MLP's expansion as gemm_activation_fusion leaves it (ViT's GELU).
Result<BenchLayer> fused_matmul(const char* name, int64_t m, int64_t k, int64_t n,
                                const char* activation) {
  auto g = std::make_unique<ir::Graph>();
  const ir::ValueId a = input(*g, "a", {m, k});
  const ir::ValueId b = constant(*g, "b", ramp({k, n}, 0.05f));
  const ir::ValueId c = constant(*g, "c", ramp({n}, 0.1f));
  const ir::ValueId y = g->add_value("y");
  ir::Node node{.name = "fused_gemm",
                .op_type = "FusedGemm",
                .domain = "kiln",
                .inputs = {a, b, c},
                .outputs = {y}};
  if (*activation != '\0') node.attrs.set("activation", std::string(activation));
  g->nodes.push_back(std::move(node));
  return finish(name, 2.0 * static_cast<double>(m * k * n), std::move(g));
}

// ViT-Tiny's attention as attention_fusion makes it: 3 heads of 64 over 197 tokens, Q, K and V
// read in place from the heads' split of the QKV product ([tokens, heads, 64]: perm_q (1, 0, 2),
// perm_k (1, 2, 0)) and the result stored as the heads' merge; `strided` false: plain [heads,
// tokens, 64] operands (K as [heads, 64, tokens]).
Result<BenchLayer> attention(const char* name, int64_t heads, int64_t tokens, int64_t d,
                             bool strided) {
  auto g = std::make_unique<ir::Graph>();
  const Dims split = {tokens, heads, d};
  const ir::ValueId q = input(*g, "q", strided ? split : Dims{heads, tokens, d});
  const ir::ValueId k = input(*g, "k", strided ? split : Dims{heads, d, tokens});
  const ir::ValueId v = input(*g, "v", strided ? split : Dims{heads, tokens, d});
  const ir::ValueId y = g->add_value("y");
  ir::Node node{.name = "attention",
                .op_type = "Attention",
                .domain = "kiln",
                .inputs = {q, k, v},
                .outputs = {y}};
  node.attrs.set("scale", 1.0f / std::sqrt(static_cast<float>(d)));
  if (strided) {
    node.attrs.set("perm_q", std::vector<int64_t>{1, 0, 2});
    node.attrs.set("perm_k", std::vector<int64_t>{1, 2, 0});
    node.attrs.set("perm_v", std::vector<int64_t>{1, 0, 2});
    node.attrs.set("perm_y", std::vector<int64_t>{1, 0, 2});
  }
  g->nodes.push_back(std::move(node));
  return finish(name, 4.0 * static_cast<double>(heads * tokens * tokens * d), std::move(g));
}

// ResNet-50's FP32 convolutions by kind (its stride-2 1x1 downsamples last), and MobileNetV2's
// first convolution (3 input channels, stride 2), 7x7 pointwise ones (49 pixels: a tile of 32
// columns, one of 16 and a last pixel) and projections to few channels on large planes (2 to 4
// row panels a packed column panel).
constexpr ConvShape kConvs[] = {
    {"mobilenet_v2", 32, 16, 112, 1, 1, 1},
    {"mobilenet_v2", 144, 24, 56, 1, 1, 1},
    {"mobilenet_v2", 192, 32, 28, 1, 1, 1},
    {"resnet50", 3, 64, 224, 7, 2, 1},
    {"vit", 3, 192, 224, 16, 16, 1, "", false, 0},  // ViT-Tiny's patch embedding
    {"resnet50", 64, 64, 56, 3, 1, 1},
    {"resnet50", 64, 64, 56, 1, 1, 1},
    {"resnet50", 64, 256, 56, 1, 1, 1},
    {"resnet50", 256, 64, 56, 1, 1, 1},
    {"resnet50", 128, 128, 56, 3, 2, 1},
    {"resnet50", 256, 256, 28, 3, 2, 1},
    {"resnet50", 512, 512, 14, 3, 2, 1},
    {"resnet50", 128, 128, 28, 3, 1, 1},
    {"resnet50", 256, 256, 14, 3, 1, 1},
    {"resnet50", 1024, 256, 14, 1, 1, 1},
    {"resnet50", 512, 512, 7, 3, 1, 1},
    {"resnet50", 2048, 512, 7, 1, 1, 1},
    {"mobilenet_v2", 960, 320, 7, 1, 1, 1},
    {"mobilenet_v2", 160, 960, 7, 1, 1, 1},
    {"mobilenet_v2", 3, 32, 224, 3, 2, 1},
    {"resnet50", 256, 512, 56, 1, 2, 1},
    {"resnet50", 512, 1024, 28, 1, 2, 1},
    {"resnet50", 1024, 2048, 14, 1, 2, 1},
    {"resnet50", 64, 256, 56, 1, 1, 1, "Relu", true},
    {"resnet50", 256, 1024, 14, 1, 1, 1, "Relu", true},
    {"efficientnet_b0", 16, 96, 112, 1, 1, 1},  // its first expansion, with ReLU and with SiLU
    {"efficientnet_b0", 16, 96, 112, 1, 1, 1, "Silu"},
};

// Every distinct depthwise convolution of MobileNetV2 and EfficientNet-B0's first and 5x5 ones
// (FP32), the latter with EfficientNet's SiLU.
constexpr ConvShape kDepthwise[] = {
    {"mobilenet_v2", 32, 32, 112, 3, 1, 32},
    {"mobilenet_v2", 96, 96, 112, 3, 2, 96},
    {"mobilenet_v2", 144, 144, 56, 3, 1, 144},
    {"mobilenet_v2", 144, 144, 56, 3, 2, 144},
    {"mobilenet_v2", 192, 192, 28, 3, 1, 192},
    {"mobilenet_v2", 192, 192, 28, 3, 2, 192},
    {"mobilenet_v2", 384, 384, 14, 3, 1, 384},
    {"mobilenet_v2", 576, 576, 14, 3, 2, 576},
    {"mobilenet_v2", 960, 960, 7, 3, 1, 960},
    {"efficientnet_b0", 32, 32, 112, 3, 1, 32, "Silu"},
    {"efficientnet_b0", 240, 240, 28, 5, 1, 240, "Silu"},
    {"efficientnet_b0", 672, 672, 14, 5, 2, 672, "Silu"},
    {"efficientnet_b0", 1152, 1152, 7, 5, 1, 1152, "Silu"},
};

// Every distinct convolution of ResNet-50 (torchvision v1.5: the stride on the 3x3 convolutions),
// with how often it occurs (53 convolutions in all): the INT8 suite, so that a network-weighted
// figure can be formed (kernels/int8_summary.py).
struct CountedShape {
  ConvShape s;
  int repeats;
};
constexpr CountedShape kResNet50[] = {
    {{"resnet50", 3, 64, 224, 7, 2, 1}, 1},     {{"resnet50", 64, 64, 56, 1, 1, 1}, 1},
    {{"resnet50", 64, 64, 56, 3, 1, 1}, 3},     {{"resnet50", 64, 256, 56, 1, 1, 1}, 4},
    {{"resnet50", 256, 64, 56, 1, 1, 1}, 2},    {{"resnet50", 256, 128, 56, 1, 1, 1}, 1},
    {{"resnet50", 128, 128, 56, 3, 2, 1}, 1},   {{"resnet50", 128, 512, 28, 1, 1, 1}, 4},
    {{"resnet50", 256, 512, 56, 1, 2, 1}, 1},   {{"resnet50", 512, 128, 28, 1, 1, 1}, 3},
    {{"resnet50", 128, 128, 28, 3, 1, 1}, 3},   {{"resnet50", 512, 256, 28, 1, 1, 1}, 1},
    {{"resnet50", 256, 256, 28, 3, 2, 1}, 1},   {{"resnet50", 256, 1024, 14, 1, 1, 1}, 6},
    {{"resnet50", 512, 1024, 28, 1, 2, 1}, 1},  {{"resnet50", 1024, 256, 14, 1, 1, 1}, 5},
    {{"resnet50", 256, 256, 14, 3, 1, 1}, 5},   {{"resnet50", 1024, 512, 14, 1, 1, 1}, 1},
    {{"resnet50", 512, 512, 14, 3, 2, 1}, 1},   {{"resnet50", 512, 2048, 7, 1, 1, 1}, 3},
    {{"resnet50", 1024, 2048, 14, 1, 2, 1}, 1}, {{"resnet50", 2048, 512, 7, 1, 1, 1}, 2},
    {{"resnet50", 512, 512, 7, 3, 1, 1}, 2},
};
constexpr ConvShape kMobileNetDepthwise[] = {
    {"mobilenet_v2", 144, 144, 56, 3, 1, 144},
    {"mobilenet_v2", 96, 96, 112, 3, 2, 96},
    {"mobilenet_v2", 960, 960, 7, 3, 1, 960},
};
// MobileNetV2's shallow pointwise convolutions (expand and project), which an NHWC engine runs as
// GEMMs of [pixels, c] by [c, k]: both forms are benchmarked.
constexpr ConvShape kMobileNetPointwise[] = {
    {"mobilenet_v2", 16, 96, 112, 1, 1, 1}, {"mobilenet_v2", 24, 144, 56, 1, 1, 1},
    {"mobilenet_v2", 144, 24, 56, 1, 1, 1}, {"mobilenet_v2", 32, 192, 28, 1, 1, 1},
    {"mobilenet_v2", 64, 384, 14, 1, 1, 1}, {"mobilenet_v2", 160, 960, 7, 1, 1, 1},
};

}  // namespace

Result<std::vector<BenchLayer>> bench_layers() {
  std::vector<BenchLayer> out;
  for (const ConvShape& s : kConvs) {
    KILN_ASSIGN_OR_RETURN(BenchLayer l, fused_conv(s));
    out.push_back(std::move(l));
  }
  for (const ConvShape& s : kDepthwise) {
    KILN_ASSIGN_OR_RETURN(BenchLayer l, fused_conv(s));
    out.push_back(std::move(l));
  }
  // The same layers on the blocked layout (names ending _nchw16c), as the layout pass would block
  // them: a first layer (fewer than 8 channels) writes the blocked layout from its NCHW input.
  for (std::span<const ConvShape> set :
       {std::span<const ConvShape>(kConvs), std::span<const ConvShape>(kDepthwise)}) {
    for (const ConvShape& s : set) {
      if (s.c < 8 && s.group != 1) continue;
      KILN_ASSIGN_OR_RETURN(BenchLayer l, fused_conv(s, true));
      out.push_back(std::move(l));
    }
  }
  KILN_ASSIGN_OR_RETURN(BenchLayer qkv, matmul("vit.matmul_197x192x576", 197, 192, 576));
  out.push_back(std::move(qkv));
  KILN_ASSIGN_OR_RETURN(BenchLayer expand, matmul("vit.matmul_197x192x768", 197, 192, 768));
  out.push_back(std::move(expand));
  KILN_ASSIGN_OR_RETURN(BenchLayer bias,
                        fused_matmul("vit.fused_gemm_bias_197x192x768", 197, 192, 768, ""));
  out.push_back(std::move(bias));
  KILN_ASSIGN_OR_RETURN(BenchLayer gelu,
                        fused_matmul("vit.fused_gemm_gelu_197x192x768", 197, 192, 768, "Gelu"));
  out.push_back(std::move(gelu));
  KILN_ASSIGN_OR_RETURN(BenchLayer mlp, matmul("vit.matmul_197x768x192", 197, 768, 192));
  out.push_back(std::move(mlp));
  KILN_ASSIGN_OR_RETURN(BenchLayer att, attention("vit.attention_3x197x64", 3, 197, 64, true));
  out.push_back(std::move(att));
  KILN_ASSIGN_OR_RETURN(BenchLayer plain,
                        attention("vit.attention_3x197x64_plain", 3, 197, 64, false));
  out.push_back(std::move(plain));
  KILN_ASSIGN_OR_RETURN(BenchLayer fc, matmul("resnet50.fc_1x2048x1000", 1, 2048, 1000));
  out.push_back(std::move(fc));
  for (const CountedShape& c : kResNet50) {
    KILN_ASSIGN_OR_RETURN(BenchLayer l, qconv(c.s));
    l.repeats = c.repeats;
    out.push_back(std::move(l));
    KILN_ASSIGN_OR_RETURN(BenchLayer ln, qconv(c.s, true));
    ln.repeats = c.repeats;
    out.push_back(std::move(ln));
    if (c.s.kernel != 1 || c.s.stride != 1) continue;
    // A 1x1 convolution on NHWC tensors is this GEMM: kiln's own kernel beside the oneDNN peer.
    const std::string gemm =
        fmt::format("{}.qgemm_nhwc_{}x{}x{}", c.s.model, c.s.hw * c.s.hw, c.s.c, c.s.k);
    KILN_ASSIGN_OR_RETURN(BenchLayer g, qgemm(gemm.c_str(), c.s.hw * c.s.hw, c.s.c, c.s.k));
    g.repeats = c.repeats;
    out.push_back(std::move(g));
  }
  // ResNet-50's block ends with the residual they carry in the network (not counted again in
  // the suite's repeats).
  for (const CountedShape& c : kResNet50) {
    if (c.s.kernel != 1 || c.s.stride != 1 || c.s.k != 4 * c.s.c) continue;
    ConvShape r = c.s;
    r.residual = true;
    KILN_ASSIGN_OR_RETURN(BenchLayer ln, qconv(r, true));
    out.push_back(std::move(ln));
  }
  for (const ConvShape& s : kMobileNetDepthwise) {
    KILN_ASSIGN_OR_RETURN(BenchLayer l, qconv(s));
    out.push_back(std::move(l));
  }
  for (const ConvShape& s : kMobileNetPointwise) {
    KILN_ASSIGN_OR_RETURN(BenchLayer f, fused_conv(s, true));
    out.push_back(std::move(f));
    KILN_ASSIGN_OR_RETURN(BenchLayer l, qconv(s));
    out.push_back(std::move(l));
    const std::string gemm = fmt::format("{}.qgemm_nhwc_{}x{}x{}", s.model, s.hw * s.hw, s.c, s.k);
    KILN_ASSIGN_OR_RETURN(BenchLayer g, qgemm(gemm.c_str(), s.hw * s.hw, s.c, s.k));
    out.push_back(std::move(g));
  }
  KILN_ASSIGN_OR_RETURN(BenchLayer qqkv, qgemm("vit.qmatmul_197x192x576", 197, 192, 576));
  out.push_back(std::move(qqkv));
  KILN_ASSIGN_OR_RETURN(BenchLayer qmlp, qgemm("vit.qmatmul_197x768x192", 197, 768, 192));
  out.push_back(std::move(qmlp));
  KILN_ASSIGN_OR_RETURN(BenchLayer qfc, qgemm("resnet50.qfc_1x2048x1000", 1, 2048, 1000));
  out.push_back(std::move(qfc));
  return out;
}

}  // namespace kiln::bench
