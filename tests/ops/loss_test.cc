// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss. Expected values are computed by hand from
// the ONNX definitions (log-softmax values with a calculator), never from kiln's kernels.
#include <cmath>
#include <limits>

#include "elementwise_test_util.h"
#include "math_test_util.h"

namespace kiln::testing {
namespace {

using namespace ew;

// Log-probabilities for N = 2, C = 3.
Tensor log_probs() { return t<float>({2, 3}, {-1.0f, -2.0f, -3.0f, -0.5f, -1.5f, -2.5f}); }
Tensor targets() { return t<int64_t>({2}, {2, 0}); }

OpCase nll(std::vector<Tensor> inputs, ir::Attributes a = {}, int opset = 13) {
  return op("NegativeLogLikelihoodLoss", std::move(inputs), opset, std::move(a));
}
OpCase sce(std::vector<Tensor> inputs, ir::Attributes a = {}, int num_outputs = 1) {
  OpCase c = op("SoftmaxCrossEntropyLoss", std::move(inputs), 13, std::move(a));
  c.num_outputs = num_outputs;
  return c;
}
ir::Attributes reduction(const char* r) { return attrs({{"reduction", std::string(r)}}); }

TEST(Loss, NllReductions) {
  // loss = -input[i, target[i]]: [3, 0.5].
  expect_op(nll({log_probs(), targets()}, reduction("none")), t<float>({2}, {3.0f, 0.5f}));
  expect_op(nll({log_probs(), targets()}, reduction("sum")), t<float>({}, {3.5f}));
  expect_op(nll({log_probs(), targets()}), t<float>({}, {1.75f}));  // mean is the default
  expect_op(nll({log_probs(), targets()}, reduction("mean"), 12), t<float>({}, {1.75f}));
}

TEST(Loss, NllWeights) {
  const Tensor w = t<float>({3}, {0.2f, 0.3f, 0.5f});
  // [3 * 0.5, 0.5 * 0.2]; the mean divides by the weights of the targets: 1.6 / 0.7.
  expect_op(nll({log_probs(), targets(), w}, reduction("none")), t<float>({2}, {1.5f, 0.1f}));
  expect_op(nll({log_probs(), targets(), w}, reduction("sum")), t<float>({}, {1.6f}));
  expect_op(nll({log_probs(), targets(), w}), t<float>({}, {2.2857142857f}));
}

TEST(Loss, NllIgnoreIndex) {
  const Tensor w = t<float>({3}, {0.2f, 0.3f, 0.5f});
  const auto ii = [](int64_t v, const char* r) {
    return attrs({{"ignore_index", v}, {"reduction", std::string(r)}});
  };
  // Target 2 is ignored: its loss is 0 and it does not count in the mean.
  expect_op(nll({log_probs(), targets()}, ii(2, "none")), t<float>({2}, {0.0f, 0.5f}));
  expect_op(nll({log_probs(), targets()}, ii(2, "mean")), t<float>({}, {0.5f}));
  expect_op(nll({log_probs(), targets(), w}, ii(2, "mean")), t<float>({}, {0.5f}));  // 0.1 / 0.2
  // A negative ignore index may appear among the targets.
  expect_op(nll({log_probs(), t<int32_t>({2}, {-1, 1})}, ii(-1, "sum")), t<float>({}, {1.5f}));
  // Every target ignored: the mean is 0 / 0.
  expect_op(nll({log_probs(), t<int64_t>({2}, {2, 2})}, ii(2, "mean")),
            t<float>({}, {std::numeric_limits<float>::quiet_NaN()}));
}

TEST(Loss, NllSpatialDims) {
  // input [N=1, C=2, d=2]: class scores at d0 are [-1, -2], at d1 [-3, -4].
  const Tensor x = t<float>({1, 2, 2}, {-1.0f, -3.0f, -2.0f, -4.0f});
  const Tensor target = t<int64_t>({1, 2}, {1, 0});
  expect_op(nll({x, target}, reduction("none")), t<float>({1, 2}, {2.0f, 3.0f}));
  expect_op(nll({x, target}), t<float>({}, {2.5f}));
  expect_op(nll({t<double>({1, 2, 2}, {-1.0, -3.0, -2.0, -4.0}), target}, reduction("sum")),
            t<double>({}, {5.0}));
  expect_op(nll({f16({1, 2, 2}, {-1.0f, -3.0f, -2.0f, -4.0f}), target}), f16({}, {2.5f}));
}

TEST(Loss, SoftmaxCrossEntropy) {
  // Row 0: log_softmax([1, 2, 3]) = [1, 2, 3] - 3.4076059644; row 1: log_softmax([0, 0, 0]) =
  // -ln 3.
  const Tensor scores = t<float>({2, 3}, {1.0f, 2.0f, 3.0f, 0.0f, 0.0f, 0.0f});
  const Tensor labels = t<int64_t>({2}, {2, 0});
  expect_op(sce({scores, labels}, reduction("none")),
            t<float>({2}, {0.4076059644f, 1.0986122887f}));
  expect_op(sce({scores, labels}), t<float>({}, {0.7531091265f}));
  expect_op(sce({scores, labels}, reduction("sum")), t<float>({}, {1.5062182531f}));
  // Weights [1, 2, 3]: (3 * 0.4076059644 + 1 * 1.0986122887) / (3 + 1).
  expect_op(sce({scores, labels, t<float>({3}, {1.0f, 2.0f, 3.0f})}),
            t<float>({}, {0.5803575455f}));
  const Tensor log_prob = t<float>({2, 3}, {-2.4076059644f, -1.4076059644f, -0.4076059644f,
                                            -1.0986122887f, -1.0986122887f, -1.0986122887f});
  expect_output(sce({scores, labels}, {}, 2), log_prob, 1);
  expect_output(sce({scores, labels}, attrs({{"ignore_index", int64_t{0}}}), 2),
                t<float>({}, {0.4076059644f}), 0);
}

TEST(Loss, SymbolicShapes) {
  using math::sym;
  const auto x = ir::TensorDesc::of(DType::kF32, {sym("N"), ir::Dim::known(5), sym("L")});
  const auto target = ir::TensorDesc::of(DType::kI64, {ir::Dim::unknown(), sym("L")});
  auto r = math::infer_one("NegativeLogLikelihoodLoss", 13, reduction("none"), {x, target});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].to_string(), "float32[N,L]");
  r = math::infer_one("SoftmaxCrossEntropyLoss", 13, {}, {x, target}, {}, 2);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].to_string(), "float32[]");
  EXPECT_EQ((*r)[1].to_string(), "float32[N,5,L]");
  r = math::infer_one("NegativeLogLikelihoodLoss", 13, reduction("none"),
                      {ir::TensorDesc::unknown_shape(DType::kF32), target});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].to_string(), "float32[?,L]");
}

TEST(Loss, InvalidModels) {
  const Tensor x = log_probs();
  expect_error(nll({x, targets()}, reduction("avg")), StatusCode::kInvalidModel, "reduction");
  expect_error(nll({t<float>({3}, {1, 2, 3}), t<int64_t>({}, {0})}), StatusCode::kInvalidModel,
               "rank >= 2");
  expect_error(nll({x, t<int64_t>({2, 1}, {0, 0})}), StatusCode::kInvalidModel, "rank 1");
  expect_error(nll({x, t<int64_t>({3}, {0, 0, 0})}), StatusCode::kInvalidModel, "does not match");
  expect_error(nll({x, targets(), t<float>({2}, {1, 1})}), StatusCode::kInvalidModel,
               "one element per class");
  expect_error(nll({x, targets(), t<float>({1, 3}, {1, 1, 1})}), StatusCode::kInvalidModel, "1-D");
  expect_error(nll({x, targets(), t<double>({3}, {1, 1, 1})}), StatusCode::kInvalidModel, "dtype");
  expect_error(nll({x, t<float>({2}, {0, 1})}), StatusCode::kInvalidModel, "int32 or int64");
  expect_error(nll({t<int32_t>({2, 3}, {0, 0, 0, 0, 0, 0}), targets()}), StatusCode::kUnsupported,
               "int32");
  expect_error(sce({x, targets()}, reduction("")), StatusCode::kInvalidModel, "reduction");
  expect_error(sce({t<float>({2}, {1, 2}), t<int64_t>({}, {0})}), StatusCode::kInvalidModel,
               "rank >= 2");
  // The loss ops arrived at opset 12.
  EXPECT_FALSE(run_op(nll({x, targets()}, {}, 11)).is_ok());
}

TEST(Loss, TargetOutOfRange) {
  expect_error(nll({log_probs(), t<int64_t>({2}, {3, 0})}), StatusCode::kInvalidModel,
               "not a class in [0, 3)");
  expect_error(nll({log_probs(), t<int64_t>({2}, {-1, 0})}, attrs({{"ignore_index", int64_t{-2}}})),
               StatusCode::kInvalidModel, "ignore_index -2");
  expect_error(sce({log_probs(), t<int32_t>({2}, {0, 7})}), StatusCode::kInvalidModel,
               "value 7 at flat index 1");
}

}  // namespace
}  // namespace kiln::testing
