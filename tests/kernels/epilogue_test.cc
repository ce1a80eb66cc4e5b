// The fused epilogue of the conv and GEMM kernels (bias, residual, activation), driven through the
// kernel factories a fused layer's tactic uses, against the reference op followed by the same
// element-wise steps computed here.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>

#include "kernels/cpu/elementwise.h"
#include "kernels/tactic_test_util.h"
#include "runtime/reference_executor.h"
#include "tactics/builtin_conv.h"
#include "tactics/builtin_gemm.h"

namespace kiln::testing {
namespace {

namespace cpu = kernels::cpu;
using tactics::builtin::ConvAlgo;
using tactics::builtin::ConvEpilogueSpec;

Tensor reference_output(const OpGraph& og) {
  auto exec = runtime::ReferenceExecutor::create(og.graph);
  EXPECT_TRUE(exec.is_ok()) << exec.status().to_string();
  auto out = exec->run(og.feeds);
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return out.is_ok() ? (*out)[0] : Tensor();
}

// y = act(y + residual) with the activation computed in double, as an independent oracle.
void add_and_activate(Tensor& y, const Tensor* residual, std::optional<cpu::UnaryKind> act,
                      float alpha) {
  float* v = y.data<float>();
  for (int64_t i = 0; i < y.numel(); ++i) {
    double x = v[i] + (residual ? residual->data<float>()[i] : 0.0f);
    if (!act) {
      v[i] = static_cast<float>(x);
      continue;
    }
    switch (*act) {
      case cpu::UnaryKind::kRelu:
        x = std::max(x, 0.0);
        break;
      case cpu::UnaryKind::kLeakyRelu:
        x = x < 0 ? alpha * x : x;
        break;
      case cpu::UnaryKind::kSilu:
        x = x / (1.0 + std::exp(-x));
        break;

      default:
        FAIL() << "activation without an oracle";
    }
    v[i] = static_cast<float>(x);
  }
}

OpCase conv_case(int64_t k) {
  OpCase c;
  c.op_type = "Conv";
  c.attrs = attrs({{"pads", Ints(4, k / 2)}});
  c.inputs = {in(random_f32({2, 6, 9, 11}, 1)), constant(random_f32({10, 6, k, k}, 2)),
              constant(random_f32({10}, 3))};
  return c;
}

TEST(ConvEpilogue, AddsResidualThenActivates) {
  for (auto [algo, k] : {std::pair{ConvAlgo::kDirect, int64_t{3}}, {ConvAlgo::kPointwise, 1}}) {
    for (cpu::UnaryKind act : {cpu::UnaryKind::kRelu, cpu::UnaryKind::kSilu}) {
      auto og = build_op_graph(conv_case(k));
      ASSERT_TRUE(og.is_ok()) << og.status().to_string();
      const tactics::LayerSpec spec = layer_spec(og->graph);
      ConvEpilogueSpec ep{.bias_input = 2, .residual_input = 3};
      ep.activation = cpu::UnaryParams{act};
      auto kernel = tactics::builtin::make_conv_kernel(spec, algo, ep);
      ASSERT_TRUE(kernel.is_ok()) << kernel.status().to_string();
      const Tensor residual = random_f32({2, 10, 9, 11}, 4);
      auto got = run_layer_kernel(**kernel, *og, {residual});
      ASSERT_TRUE(got.is_ok()) << got.status().to_string();
      Tensor want = reference_output(*og);
      add_and_activate(want, &residual, act, 0);
      EXPECT_EQ(compare_tensors(got->outputs[0], want, kSumTol), "");
      EXPECT_EQ(got->run_allocations, 0);
    }
  }
}

// The residual's buffer is the output's: each residual element must be read before it is
// overwritten. 300 input channels put the 1x1 GEMM's K over one depth block.
TEST(ConvEpilogue, AddsAResidualInPlace) {
  for (auto [algo, k] : {std::pair{ConvAlgo::kDirect, int64_t{3}}, {ConvAlgo::kPointwise, 1}}) {
    OpCase c;
    c.op_type = "Conv";
    c.attrs = attrs({{"pads", Ints(4, k / 2)}});
    c.inputs = {in(random_f32({1, 300, 5, 6}, 1)), constant(random_f32({7, 300, k, k}, 2)),
                constant(random_f32({7}, 3))};
    auto og = build_op_graph(c);
    ASSERT_TRUE(og.is_ok()) << og.status().to_string();
    auto kernel = tactics::builtin::make_conv_kernel(layer_spec(og->graph), algo,
                                                     ConvEpilogueSpec{.residual_input = 3});
    ASSERT_TRUE(kernel.is_ok());
    const Tensor residual = random_f32({1, 7, 5, 6}, 4);
    Tensor y = residual.clone();
    std::vector<TensorView> ins;
    for (ir::ValueId v : og->graph.nodes[0].inputs) {
      const ir::Value& value = og->graph.value(v);
      ins.push_back(
          TensorView::of(value.initializer ? *value.initializer : og->feeds.at(value.name)));
    }
    ins.push_back(TensorView::of(y));
    const TensorView outs[] = {TensorView::of(y)};
    ASSERT_TRUE((*kernel)->reshape(ins, outs).is_ok());
    ASSERT_TRUE((*kernel)->run(ins, outs).is_ok());
    Tensor want = reference_output(*og);
    add_and_activate(want, &residual, std::nullopt, 0);
    EXPECT_EQ(compare_tensors(y, want, Tolerance{1e-5, 5e-5}), "");
  }
}

TEST(ConvEpilogue, RefusesAResidualOfTheWrongShape) {
  auto og = build_op_graph(conv_case(3));
  ASSERT_TRUE(og.is_ok());
  auto kernel = tactics::builtin::make_conv_kernel(layer_spec(og->graph), ConvAlgo::kDirect,
                                                   ConvEpilogueSpec{.residual_input = 3});
  ASSERT_TRUE(kernel.is_ok());
  auto got = run_layer_kernel(**kernel, *og, {random_f32({2, 10, 9, 10}, 4)});
  ASSERT_FALSE(got.is_ok());
  EXPECT_NE(got.status().message().find("residual"), std::string::npos) << got.status().to_string();
  EXPECT_NE(got.status().message().find("node0"), std::string::npos);
}

TEST(GemmEpilogue, ActivatesAfterAlphaBetaAndC) {
  OpCase c;
  c.op_type = "Gemm";
  c.attrs = attrs({{"alpha", 0.5f}, {"beta", 2.0f}, {"transB", int64_t{1}}});
  c.inputs = {in(random_f32({37, 19}, 1)), constant(random_f32({23, 19}, 2)),
              constant(random_f32({23}, 3))};
  auto og = build_op_graph(c);
  ASSERT_TRUE(og.is_ok()) << og.status().to_string();
  auto kernel = tactics::builtin::make_gemm_kernel(
      layer_spec(og->graph), cpu::UnaryParams{cpu::UnaryKind::kLeakyRelu, 0.1f});
  ASSERT_TRUE(kernel.is_ok());
  auto got = run_layer_kernel(**kernel, *og);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  Tensor want = reference_output(*og);
  add_and_activate(want, nullptr, cpu::UnaryKind::kLeakyRelu, 0.1f);
  EXPECT_EQ(compare_tensors(got->outputs[0], want, kSumTol), "");
  EXPECT_EQ(got->run_allocations, 0);
}

TEST(UnaryKernel, SiluAndInPlaceActivation) {
  const float xs[] = {-100.0f, -5.0f, -1.0f, -1e-3f, 0.0f, 1e-3f, 0.5f, 3.0f, 100.0f};
  float y[std::size(xs)];
  const cpu::UnaryParams silu{cpu::UnaryKind::kSilu};
  cpu::unary(silu, xs, y, std::ssize(xs));
  for (size_t i = 0; i < std::size(xs); ++i) {
    const double want = xs[i] / (1.0 + std::exp(-static_cast<double>(xs[i])));
    EXPECT_NEAR(y[i], want, 1e-6 * std::max(1.0, std::fabs(want))) << "x = " << xs[i];
  }
  float z[std::size(xs)];
  std::copy(std::begin(xs), std::end(xs), z);
  cpu::activate_unary(z, std::ssize(xs), &silu);
  for (size_t i = 0; i < std::size(xs); ++i) EXPECT_EQ(z[i], y[i]);
}

}  // namespace
}  // namespace kiln::testing
