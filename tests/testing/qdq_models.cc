#include "testing/qdq_models.h"

#include <cmath>

#include "testing/onnx_builder.h"

namespace kiln::testing {

std::vector<float> test_wave(size_t n, float a, float f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = a * std::sin(f * static_cast<float>(i) + 0.3f);
  return v;
}

std::string write_residual_test_model(const std::filesystem::path& dir) {
  std::vector<float> bn_scale = test_wave(8, 0.2f, 0.5f);
  for (float& s : bn_scale) s += 1.0f;  // BN scales around 1
  OnnxBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {-1, 3, 8, 8}, {"batch", "", "", ""}).output("y");
  b.initializer("w1", {8, 3, 3, 3}, test_wave(216, 0.3f, 0.9f))
      .initializer("b1", {8}, test_wave(8, 0.1f, 1.3f))
      .initializer("w2", {8, 8, 3, 3}, test_wave(576, 0.15f, 0.7f))
      .initializer("bn_s", {8}, bn_scale)
      .initializer("bn_b", {8}, test_wave(8, 0.1f, 0.8f))
      .initializer("bn_m", {8}, test_wave(8, 0.05f, 0.4f))
      .initializer("bn_v", {8}, std::vector<float>(8, 1.5f))
      .initializer("wg", {5, 8}, test_wave(40, 0.5f, 0.6f))
      .initializer("bg", {5}, test_wave(5, 0.2f, 1.1f));
  testing::set_attr_ints(b.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  b.node("Relu", {"c1"}, {"r1"}, "relu1");
  testing::set_attr_ints(b.node("Conv", {"r1", "w2"}, {"c2"}, "conv2"), "pads", {1, 1, 1, 1});
  b.node("BatchNormalization", {"c2", "bn_s", "bn_b", "bn_m", "bn_v"}, {"n2"}, "bn2");
  b.node("Add", {"n2", "r1"}, {"a2"}, "add2");
  b.node("Relu", {"a2"}, {"r2"}, "relu2");
  b.node("GlobalAveragePool", {"r2"}, {"p"}, "pool");
  b.node("Flatten", {"p"}, {"f"}, "flatten");
  testing::set_attr_int(b.node("Gemm", {"f", "wg", "bg"}, {"y"}, "fc"), "transB", 1);
  return b.write(dir).string();
}

}  // namespace kiln::testing
