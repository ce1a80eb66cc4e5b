#include "kernels/layers.h"

#include <fmt/format.h>

#include <cmath>

#include "ops/infer_graph.h"

namespace kiln::bench {
namespace {

struct ConvShape {
  const char* model;
  int64_t c, k, hw, kernel, stride, group;
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

ir::ValueId input(ir::Graph& g, const std::string& name, Dims dims) {
  const ir::ValueId v = g.add_value(name, ir::TensorDesc::of_dims(DType::kF32, dims));
  g.value(v).is_graph_input = true;
  g.inputs.push_back(v);
  return v;
}

Result<BenchLayer> finish(std::string name, double flops, std::unique_ptr<ir::Graph> g) {
  const ir::ValueId out = g->nodes.back().outputs[0];
  g->value(out).is_graph_output = true;
  g->outputs.push_back(out);
  g->opset_imports = {{"", 17}, {"kiln", 1}};
  for (ir::Node& n : g->nodes) n.opset = n.domain.empty() ? 17 : 1;
  Status s = ops::infer_graph_shapes(*g);
  if (!s.is_ok()) return s.with_context(name);
  return BenchLayer{std::move(name), flops, std::move(g)};
}

// kiln.FusedConv (conv + bias + ReLU): what a Conv + BN + ReLU of an exported model becomes.
Result<BenchLayer> fused_conv(const ConvShape& s) {
  auto g = std::make_unique<ir::Graph>();
  const int64_t pad = s.kernel / 2;
  const int64_t out_hw = (s.hw + 2 * pad - s.kernel) / s.stride + 1;
  const ir::ValueId x = input(*g, "x", {1, s.c, s.hw, s.hw});
  const ir::ValueId w = constant(*g, "w", ramp({s.k, s.c / s.group, s.kernel, s.kernel}, 0.05f));
  const ir::ValueId b = constant(*g, "b", ramp({s.k}, 0.1f));
  const ir::ValueId y = g->add_value("y");
  ir::Node n{.name = "conv",
             .op_type = "FusedConv",
             .domain = "kiln",
             .inputs = {x, w, b},
             .outputs = {y}};
  n.attrs.set("kernel_shape", std::vector<int64_t>{s.kernel, s.kernel});
  n.attrs.set("strides", std::vector<int64_t>{s.stride, s.stride});
  n.attrs.set("pads", std::vector<int64_t>{pad, pad, pad, pad});
  n.attrs.set("group", s.group);
  n.attrs.set("activation", std::string("Relu"));
  g->nodes.push_back(std::move(n));
  const double flops = 2.0 * static_cast<double>(s.k * (s.c / s.group) * s.kernel * s.kernel) *
                       static_cast<double>(out_hw * out_hw);
  const std::string name = s.group == 1 ? fmt::format("{}.conv{}x{}_s{}_{}to{}_{}", s.model,
                                                      s.kernel, s.kernel, s.stride, s.c, s.k, s.hw)
                                        : fmt::format("{}.dwconv{}x{}_s{}_{}_{}", s.model, s.kernel,
                                                      s.kernel, s.stride, s.c, s.hw);
  return finish(name, flops, std::move(g));
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

constexpr ConvShape kConvs[] = {
    {"resnet50", 3, 64, 224, 7, 2, 1},       {"resnet50", 64, 64, 56, 3, 1, 1},
    {"resnet50", 64, 64, 56, 1, 1, 1},       {"resnet50", 64, 256, 56, 1, 1, 1},
    {"resnet50", 256, 64, 56, 1, 1, 1},      {"resnet50", 128, 128, 56, 3, 2, 1},
    {"resnet50", 128, 128, 28, 3, 1, 1},     {"resnet50", 256, 256, 14, 3, 1, 1},
    {"resnet50", 1024, 256, 14, 1, 1, 1},    {"resnet50", 512, 512, 7, 3, 1, 1},
    {"resnet50", 2048, 512, 7, 1, 1, 1},     {"mobilenet_v2", 144, 144, 56, 3, 1, 144},
    {"mobilenet_v2", 96, 96, 112, 3, 2, 96}, {"mobilenet_v2", 960, 960, 7, 3, 1, 960},
};

}  // namespace

Result<std::vector<BenchLayer>> bench_layers() {
  std::vector<BenchLayer> out;
  for (const ConvShape& s : kConvs) {
    KILN_ASSIGN_OR_RETURN(BenchLayer l, fused_conv(s));
    out.push_back(std::move(l));
  }
  KILN_ASSIGN_OR_RETURN(BenchLayer qkv, matmul("vit.matmul_197x192x576", 197, 192, 576));
  out.push_back(std::move(qkv));
  KILN_ASSIGN_OR_RETURN(BenchLayer mlp, matmul("vit.matmul_197x768x192", 197, 768, 192));
  out.push_back(std::move(mlp));
  KILN_ASSIGN_OR_RETURN(BenchLayer fc, matmul("resnet50.fc_1x2048x1000", 1, 2048, 1000));
  out.push_back(std::move(fc));
  return out;
}

}  // namespace kiln::bench
