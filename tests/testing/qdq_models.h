#pragma once
// Small float models for the quantization tests (kiln quantize, ONNX Runtime runs of its output).

#include <filesystem>
#include <string>
#include <vector>

namespace kiln::testing {

// a * sin(f * i + 0.3), i < n: deterministic weights with both signs.
std::vector<float> test_wave(size_t n, float a, float f);

// Writes model.onnx into `dir` and returns its path: x[batch,3,8,8] -> Conv(3->8)+bias -> Relu ->
// Conv(8->8) -> BatchNormalization -> Add(residual: the first Relu's output) -> Relu ->
// GlobalAveragePool -> Flatten -> Gemm(8->5, transB, bias) -> y[batch,5]. Node names: conv1,
// relu1, conv2, bn2, add2, relu2, pool, flatten, fc. Opset 17.
std::string write_residual_test_model(const std::filesystem::path& dir);

}  // namespace kiln::testing
