// The fused ops' activation epilogue (kernels/ref/activation.h) against hand-computed values.
#include "kernels/ref/activation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace kiln::kernels::ref {
namespace {

float act(Activation kind, float x, float alpha = 0.0f, float beta = 0.0f) {
  return apply_activation(ActivationParams{kind, alpha, beta}, x);
}

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(Activation, Relu) {
  EXPECT_EQ(act(Activation::kRelu, -2.0f), 0.0f);
  EXPECT_EQ(act(Activation::kRelu, 3.5f), 3.5f);
  EXPECT_TRUE(std::isnan(act(Activation::kRelu, kNaN)));
}

TEST(Activation, ClipIncludingReversedBoundsAndNaN) {
  EXPECT_EQ(act(Activation::kClip, -3.0f, -1.0f, 2.0f), -1.0f);
  EXPECT_EQ(act(Activation::kClip, 0.5f, -1.0f, 2.0f), 0.5f);
  EXPECT_EQ(act(Activation::kClip, 5.0f, -1.0f, 2.0f), 2.0f);
  EXPECT_TRUE(std::isnan(act(Activation::kClip, kNaN, 0.0f, 6.0f)));
  // min > max: every element becomes max, as ONNX's Clip (numpy.clip) does.
  EXPECT_EQ(act(Activation::kClip, 0.0f, 3.0f, 1.0f), 1.0f);
  EXPECT_EQ(act(Activation::kClip, 5.0f, 3.0f, 1.0f), 1.0f);
}

TEST(Activation, LeakyRelu) {
  EXPECT_FLOAT_EQ(act(Activation::kLeakyRelu, -2.0f, 0.1f), -0.2f);
  EXPECT_EQ(act(Activation::kLeakyRelu, 3.0f, 0.1f), 3.0f);
}

TEST(Activation, SigmoidIsStableAtBothEnds) {
  EXPECT_EQ(act(Activation::kSigmoid, 0.0f), 0.5f);
  EXPECT_FLOAT_EQ(act(Activation::kSigmoid, 2.0f), 0.8807970779778823f);
  EXPECT_FLOAT_EQ(act(Activation::kSigmoid, -2.0f), 0.11920292202211755f);
  EXPECT_EQ(act(Activation::kSigmoid, 100.0f), 1.0f);
  const float tiny = act(Activation::kSigmoid, -100.0f);  // 3.72e-44, not NaN or 0/0
  EXPECT_GT(tiny, 0.0f);
  EXPECT_LT(tiny, 1e-40f);
}

TEST(Activation, Silu) {
  EXPECT_FLOAT_EQ(act(Activation::kSilu, 1.0f), 0.7310585786300049f);
  EXPECT_FLOAT_EQ(act(Activation::kSilu, -1.0f), -0.2689414213699951f);
  EXPECT_EQ(act(Activation::kSilu, 0.0f), 0.0f);
}

TEST(Activation, HardSwish) {
  EXPECT_EQ(act(Activation::kHardSwish, -4.0f), 0.0f);  // gate 0 below -3
  EXPECT_EQ(act(Activation::kHardSwish, 4.0f), 4.0f);   // gate 1 above 3
  EXPECT_FLOAT_EQ(act(Activation::kHardSwish, 1.0f), 2.0f / 3.0f);
  EXPECT_FLOAT_EQ(act(Activation::kHardSwish, -1.0f), -1.0f / 3.0f);
}

TEST(Activation, HardSigmoid) {
  EXPECT_FLOAT_EQ(act(Activation::kHardSigmoid, 1.0f, 0.2f, 0.5f), 0.7f);
  EXPECT_EQ(act(Activation::kHardSigmoid, -5.0f, 0.2f, 0.5f), 0.0f);
  EXPECT_EQ(act(Activation::kHardSigmoid, 5.0f, 0.2f, 0.5f), 1.0f);
  EXPECT_FLOAT_EQ(act(Activation::kHardSigmoid, 2.0f, 0.25f, 0.0f), 0.5f);
}

TEST(Activation, GeluIsTheErfForm) {
  EXPECT_EQ(act(Activation::kGelu, 0.0f), 0.0f);
  EXPECT_FLOAT_EQ(act(Activation::kGelu, 1.0f), 0.8413447460685429f);
  EXPECT_FLOAT_EQ(act(Activation::kGelu, -1.0f), -0.15865525393145707f);
  EXPECT_FLOAT_EQ(act(Activation::kGelu, 2.0f), 1.9544997361036416f);
  // The tanh approximation gives -0.00363739 here; the erf form -0.00404969.
  EXPECT_NEAR(act(Activation::kGelu, -3.0f), -0.00404969409489031f, 1e-7f);
}

TEST(Activation, TanhAndNone) {
  EXPECT_FLOAT_EQ(act(Activation::kTanh, 0.5f), 0.46211715726000974f);
  EXPECT_FLOAT_EQ(act(Activation::kTanh, -2.0f), -0.9640275800758169f);
  EXPECT_EQ(act(Activation::kNone, -7.25f), -7.25f);
}

TEST(Activation, ArrayFormAppliesInPlace) {
  std::vector<float> v = {-1.0f, 0.0f, 2.0f, 8.0f};
  apply_activation(ActivationParams{Activation::kClip, 0.0f, 6.0f}, v.data(), 4);
  EXPECT_EQ(v, (std::vector<float>{0.0f, 0.0f, 2.0f, 6.0f}));
  apply_activation(ActivationParams{}, v.data(), 4);
  EXPECT_EQ(v, (std::vector<float>{0.0f, 0.0f, 2.0f, 6.0f}));
}

TEST(Activation, NamesRoundTripAndParamCounts) {
  for (Activation k :
       {Activation::kNone, Activation::kRelu, Activation::kClip, Activation::kLeakyRelu,
        Activation::kSigmoid, Activation::kSilu, Activation::kHardSwish, Activation::kHardSigmoid,
        Activation::kGelu, Activation::kTanh}) {
    EXPECT_EQ(parse_activation(activation_name(k)), k) << activation_name(k);
  }
  EXPECT_EQ(activation_name(Activation::kNone), "");
  EXPECT_EQ(activation_name(Activation::kHardSwish), "HardSwish");
  EXPECT_EQ(parse_activation("Relu"), Activation::kRelu);
  EXPECT_FALSE(parse_activation("relu").has_value());  // names are case-sensitive, as ONNX ops
  EXPECT_FALSE(parse_activation("Softplus").has_value());
  EXPECT_EQ(activation_param_count(Activation::kClip), 2);
  EXPECT_EQ(activation_param_count(Activation::kLeakyRelu), 1);
  EXPECT_EQ(activation_param_count(Activation::kHardSigmoid), 2);
  EXPECT_EQ(activation_param_count(Activation::kGelu), 0);
}

}  // namespace
}  // namespace kiln::kernels::ref
