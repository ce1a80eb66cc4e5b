// One-input element-wise ops. Expected values are computed by hand (or with a calculator from the
// ONNX formula), never from kiln's own kernels.
#include <cmath>
#include <limits>

#include "elementwise_test_util.h"

namespace kiln::testing {
namespace elementwise_unary_test {

using namespace ew;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(ElementwiseUnary, Relu) {
  expect_op(op("Relu", {t<float>({2, 2}, {-1.0f, 0.0f, 2.5f, -0.0f})}),
            t<float>({2, 2}, {0.0f, 0.0f, 2.5f, 0.0f}));
  expect_op(op("Relu", {t<int32_t>({3}, {-7, 0, 7})}, 14), t<int32_t>({3}, {0, 0, 7}));
  expect_op(op("Relu", {f16({2}, {-1.5f, 1.5f})}), f16({2}, {0.0f, 1.5f}));
  expect_op(op("Relu", {t<double>({}, {-3.0})}), t<double>({}, {0.0}));
  // Integers only from opset 14.
  expect_error(op("Relu", {t<int32_t>({1}, {1})}, 13), StatusCode::kUnsupported, "int32");
}

TEST(ElementwiseUnary, MathFunctions) {
  expect_op(op("Sigmoid", {t<float>({4}, {0.0f, 1.0f, -1000.0f, 1000.0f})}),
            t<float>({4}, {0.5f, 0.7310585786f, 0.0f, 1.0f}));
  expect_op(op("Tanh", {t<float>({2}, {0.0f, 0.5f})}), t<float>({2}, {0.0f, 0.4621171573f}));
  expect_op(op("Erf", {t<float>({3}, {0.0f, 1.0f, -0.5f})}),
            t<float>({3}, {0.0f, 0.8427007929f, -0.5204998778f}));
  expect_op(op("Exp", {t<double>({2}, {0.0, 1.0})}), t<double>({2}, {1.0, 2.718281828459045}));
  expect_op(op("Log", {t<float>({3}, {1.0f, 2.718281828f, 0.0f})}),
            t<float>({3}, {0.0f, 1.0f, -kInf}));
  expect_op(op("Sqrt", {t<float>({3}, {4.0f, 0.25f, -1.0f})}), t<float>({3}, {2.0f, 0.5f, kNaN}));
  expect_op(op("Reciprocal", {t<float>({3}, {4.0f, -0.5f, 0.0f})}),
            t<float>({3}, {0.25f, -2.0f, kInf}));
  expect_op(op("Sin", {t<float>({2}, {0.0f, 1.5707963268f})}), t<float>({2}, {0.0f, 1.0f}));
  expect_op(op("Cos", {t<float>({2}, {0.0f, 3.1415926536f})}), t<float>({2}, {1.0f, -1.0f}));
}

TEST(ElementwiseUnary, TrigonometricAndHyperbolic) {
  expect_op(op("Tan", {t<float>({3}, {0.0f, 0.7853981634f, -1.0f})}),
            t<float>({3}, {0.0f, 1.0f, -1.5574077247f}));
  // Outside [-1, 1] the inverse sine and cosine are NaN.
  expect_op(op("Asin", {t<float>({4}, {0.0f, 0.5f, -1.0f, 2.0f})}),
            t<float>({4}, {0.0f, 0.5235987756f, -1.5707963268f, kNaN}));
  expect_op(op("Acos", {t<float>({4}, {1.0f, 0.5f, -1.0f, -1.5f})}),
            t<float>({4}, {0.0f, 1.0471975512f, 3.1415926536f, kNaN}));
  expect_op(op("Atan", {t<double>({3}, {0.0, 1.0, -1.0})}),
            t<double>({3}, {0.0, 0.7853981633974483, -0.7853981633974483}));
  expect_op(op("Sinh", {t<float>({3}, {0.0f, 1.0f, -1.0f})}),
            t<float>({3}, {0.0f, 1.1752011936f, -1.1752011936f}));
  expect_op(op("Cosh", {t<float>({3}, {0.0f, 1.0f, -1.0f})}),
            t<float>({3}, {1.0f, 1.5430806348f, 1.5430806348f}));
  expect_op(op("Asinh", {t<float>({3}, {0.0f, 1.0f, -1.0f})}),
            t<float>({3}, {0.0f, 0.8813735870f, -0.8813735870f}));
  // acosh is NaN below 1; atanh is infinite at +-1 and NaN beyond.
  expect_op(op("Acosh", {t<float>({3}, {1.0f, 2.0f, 0.5f})}),
            t<float>({3}, {0.0f, 1.3169578969f, kNaN}));
  expect_op(op("Atanh", {t<float>({4}, {0.0f, 0.5f, 1.0f, 2.0f})}),
            t<float>({4}, {0.0f, 0.5493061443f, kInf, kNaN}));
  expect_op(op("Sinh", {f16({2}, {0.0f, 2.0f})}), f16({2}, {0.0f, 3.626860408f}), {1e-3, 1e-3});
}

TEST(ElementwiseUnary, TrigonometricOpsAreFloatOnlyAndVersioned) {
  for (const char* name :
       {"Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh"}) {
    expect_error(op(name, {t<int32_t>({1}, {1})}), StatusCode::kUnsupported, "int32");
  }
  // The hyperbolic functions arrived at opset 9, the trigonometric ones at 7.
  EXPECT_FALSE(run_op(op("Sinh", {t<float>({1}, {1.0f})}, 8)).is_ok());
  EXPECT_FALSE(run_op(op("Tan", {t<float>({1}, {1.0f})}, 6)).is_ok());
}

TEST(ElementwiseUnary, Shrink) {
  // Defaults lambd = 0.5, bias = 0: hard shrink.
  expect_op(op("Shrink", {t<float>({5}, {-2.0f, -0.5f, 0.0f, 0.4f, 1.5f})}),
            t<float>({5}, {-2.0f, 0.0f, 0.0f, 0.0f, 1.5f}));
  // Soft shrink: x + bias below -lambd, x - bias above lambd.
  expect_op(op("Shrink", {t<float>({5}, {-2.0f, -1.0f, 0.0f, 1.0f, 2.0f})}, 17,
               attrs({{"lambd", 1.5f}, {"bias", 1.5f}})),
            t<float>({5}, {-0.5f, 0.0f, 0.0f, 0.0f, 0.5f}));
  expect_op(op("Shrink", {t<int32_t>({5}, {-3, -1, 0, 1, 3})}, 17,
               attrs({{"lambd", 1.0f}, {"bias", 1.0f}})),
            t<int32_t>({5}, {-2, 0, 0, 0, 2}));
  // Integer results of a fractional bias truncate toward zero: 3 - 0.5 -> 2, -3 + 0.5 -> -2.
  expect_op(op("Shrink", {t<int8_t>({2}, {3, -3})}, 17, attrs({{"lambd", 1.0f}, {"bias", 0.5f}})),
            t<int8_t>({2}, {2, -2}));
  expect_op(
      op("Shrink", {t<uint8_t>({3}, {0, 1, 5})}, 17, attrs({{"lambd", 1.0f}, {"bias", 2.0f}})),
      t<uint8_t>({3}, {0, 0, 3}));
  expect_op(op("Shrink", {f16({2}, {-1.0f, 0.25f})}), f16({2}, {-1.0f, 0.0f}));
  expect_error(op("Shrink", {b({1}, {1})}), StatusCode::kUnsupported, "bool");
  // Shrink's parameters are lambd and bias; alpha is not one of its attributes.
  EXPECT_FALSE(run_op(op("Shrink", {t<float>({1}, {1.0f})}, 17, attrs({{"alpha", 1.0f}}))).is_ok());
  EXPECT_FALSE(run_op(op("Shrink", {t<float>({1}, {1.0f})}, 8)).is_ok());
}

TEST(ElementwiseUnary, Rounding) {
  const Tensor x = t<float>({4}, {-1.5f, -0.2f, 0.2f, 1.5f});
  expect_op(op("Floor", {x}), t<float>({4}, {-2.0f, -1.0f, 0.0f, 1.0f}));
  expect_op(op("Ceil", {x}), t<float>({4}, {-1.0f, -0.0f, 1.0f, 2.0f}));
  // Round is half to even.
  expect_op(op("Round", {t<float>({7}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f, -2.6f})}),
            t<float>({7}, {0.0f, 2.0f, 2.0f, -0.0f, -2.0f, 2.0f, -3.0f}));
}

TEST(ElementwiseUnary, SignAbsNeg) {
  expect_op(op("Sign", {t<float>({3}, {-3.5f, 0.0f, 2.0f})}), t<float>({3}, {-1.0f, 0.0f, 1.0f}));
  expect_op(op("Sign", {t<int64_t>({3}, {-9, 0, 4})}), t<int64_t>({3}, {-1, 0, 1}));
  expect_op(op("Sign", {t<uint8_t>({2}, {0, 200})}), t<uint8_t>({2}, {0, 1}));
  expect_op(op("Abs", {t<int32_t>({3}, {-5, 0, 5})}), t<int32_t>({3}, {5, 0, 5}));
  expect_op(op("Abs", {t<uint8_t>({2}, {0, 255})}), t<uint8_t>({2}, {0, 255}));
  expect_op(op("Abs", {f16({2}, {-2.5f, 2.5f})}), f16({2}, {2.5f, 2.5f}));
  // Neg and Abs of the most negative integer wrap around instead of invoking undefined behaviour.
  expect_op(op("Neg", {t<int8_t>({3}, {-128, 5, 0})}), t<int8_t>({3}, {-128, -5, 0}));
  expect_op(op("Abs", {t<int64_t>({1}, {std::numeric_limits<int64_t>::min()})}),
            t<int64_t>({1}, {std::numeric_limits<int64_t>::min()}));
  expect_error(op("Neg", {t<uint32_t>({1}, {1})}), StatusCode::kUnsupported, "uint32");
}

TEST(ElementwiseUnary, ErfOnIntegersTruncates) {
  // erf(0) = 0, erf(1) = 0.84 -> 0, erf(-3) = -0.99998 -> 0 (truncation toward zero).
  expect_op(op("Erf", {t<int32_t>({3}, {0, 1, -3})}), t<int32_t>({3}, {0, 0, 0}));
}

TEST(ElementwiseUnary, SoftActivations) {
  expect_op(op("Softplus", {t<float>({3}, {0.0f, -1.0f, 100.0f})}),
            t<float>({3}, {0.6931471806f, 0.3132616875f, 100.0f}));
  expect_op(op("Softsign", {t<float>({3}, {1.0f, -3.0f, 0.0f})}),
            t<float>({3}, {0.5f, -0.75f, 0.0f}));
  expect_op(op("Mish", {t<float>({2}, {0.0f, 1.0f})}, 18), t<float>({2}, {0.0f, 0.8650983883f}));
}

TEST(ElementwiseUnary, ParameterisedActivations) {
  const Tensor x = t<float>({2}, {-1.0f, 3.0f});
  expect_op(op("Elu", {x}, 17, attrs({{"alpha", 2.0f}})), t<float>({2}, {-1.2642411177f, 3.0f}));
  expect_op(op("Elu", {x}), t<float>({2}, {-0.6321205588f, 3.0f}));
  expect_op(op("Selu", {t<float>({2}, {-1.0f, 1.0f})}),
            t<float>({2}, {-1.1113307413f, 1.0507010221f}));
  expect_op(op("Selu", {x}, 17, attrs({{"alpha", 2.0f}, {"gamma", 3.0f}})),
            t<float>({2}, {-3.7927233530f, 9.0f}));  // 3 * 2 * (e^-1 - 1)
  expect_op(op("Celu", {t<float>({2}, {-2.0f, 1.0f})}, 17, attrs({{"alpha", 2.0f}})),
            t<float>({2}, {-1.2642411177f, 1.0f}));
  expect_op(op("ThresholdedRelu", {t<float>({3}, {0.5f, 1.0f, 2.0f})}),
            t<float>({3}, {0.0f, 0.0f, 2.0f}));
  expect_op(op("ThresholdedRelu", {t<float>({2}, {0.5f, 0.2f})}, 17, attrs({{"alpha", 0.3f}})),
            t<float>({2}, {0.5f, 0.0f}));
  expect_op(op("LeakyRelu", {t<float>({2}, {-2.0f, 2.0f})}), t<float>({2}, {-0.02f, 2.0f}));
  expect_op(op("LeakyRelu", {t<float>({1}, {-2.0f})}, 16, attrs({{"alpha", 0.5f}})),
            t<float>({1}, {-1.0f}));
}

TEST(ElementwiseUnary, HardActivations) {
  const Tensor x = t<float>({5}, {-10.0f, -1.0f, 0.0f, 1.0f, 10.0f});
  expect_op(op("HardSigmoid", {x}), t<float>({5}, {0.0f, 0.3f, 0.5f, 0.7f, 1.0f}));
  expect_op(op("HardSigmoid", {x}, 17, attrs({{"alpha", 0.5f}, {"beta", 0.25f}})),
            t<float>({5}, {0.0f, 0.0f, 0.25f, 0.75f, 1.0f}));
  // x * max(0, min(1, x/6 + 0.5))
  expect_op(op("HardSwish", {t<float>({5}, {-4.0f, -1.0f, 1.0f, 3.0f, 5.0f})}),
            t<float>({5}, {0.0f, -0.3333333333f, 0.6666666667f, 3.0f, 5.0f}));
}

TEST(ElementwiseUnary, Gelu) {
  const Tensor x = t<float>({3}, {-1.0f, 0.0f, 1.0f});
  expect_op(op("Gelu", {x}, 20), t<float>({3}, {-0.1586552539f, 0.0f, 0.8413447461f}));
  expect_op(op("Gelu", {x}, 20, attrs({{"approximate", std::string("tanh")}})),
            t<float>({3}, {-0.1588080094f, 0.0f, 0.8411919906f}));
  expect_error(op("Gelu", {x}, 20, attrs({{"approximate", std::string("erf")}})),
               StatusCode::kInvalidModel, "approximate");
  // Gelu does not exist before opset 20.
  EXPECT_FALSE(run_op(op("Gelu", {x}, 19)).is_ok());
}

TEST(ElementwiseUnary, FloatOnlyOpsRejectIntegers) {
  for (const char* name : {"Sigmoid", "Exp", "Sqrt", "HardSwish", "Round", "Softplus"}) {
    expect_error(op(name, {t<int32_t>({1}, {1})}), StatusCode::kUnsupported, "int32");
  }
  expect_error(op("Tanh", {b({1}, {1})}), StatusCode::kUnsupported, "bool");
}

TEST(ElementwiseUnary, InvalidAttributes) {
  expect_error(op("Celu", {t<float>({1}, {1.0f})}, 17, attrs({{"alpha", 0.0f}})),
               StatusCode::kInvalidModel, "alpha");
  // An attribute of the wrong type or an undeclared one is refused before inference.
  EXPECT_EQ(run_op(op("Elu", {t<float>({1}, {1.0f})}, 17, attrs({{"alpha", int64_t{1}}})))
                .status()
                .code(),
            StatusCode::kInvalidModel);
  EXPECT_FALSE(run_op(op("Relu", {t<float>({1}, {1.0f})}, 17, attrs({{"beta", 1.0f}}))).is_ok());
}

TEST(ElementwiseUnary, EmptyTensors) {
  expect_op(op("Exp", {t<float>({0, 3}, {})}), t<float>({0, 3}, {}));
}

TEST(ElementwiseUnary, IsNaNIsInf) {
  const Tensor x = t<float>({4}, {1.0f, kNaN, kInf, -kInf});
  expect_op(op("IsNaN", {x}), b({4}, {0, 1, 0, 0}));
  expect_op(op("IsInf", {x}), b({4}, {0, 0, 1, 1}));
  expect_op(op("IsInf", {x}, 17, attrs({{"detect_negative", int64_t{0}}})), b({4}, {0, 0, 1, 0}));
  expect_op(op("IsInf", {x}, 17, attrs({{"detect_positive", int64_t{0}}})), b({4}, {0, 0, 0, 1}));
  expect_op(op("IsNaN", {t<double>({2}, {0.0, std::nan("")})}), b({2}, {0, 1}));
  expect_error(op("IsNaN", {t<int32_t>({1}, {1})}), StatusCode::kUnsupported, "int32");
}

TEST(ElementwiseUnary, Not) {
  expect_op(op("Not", {b({2, 2}, {1, 0, 0, 1})}), b({2, 2}, {0, 1, 1, 0}));
  expect_error(op("Not", {t<float>({1}, {1.0f})}), StatusCode::kUnsupported, "float32");
}

}  // namespace elementwise_unary_test
}  // namespace kiln::testing
