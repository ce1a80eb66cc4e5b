#pragma once
// The activation epilogue of fused kernels (kiln.FusedConv, kiln.FusedGemm): one element-wise
// function applied to each output as it is produced, with the exact semantics of the ONNX op it
// replaces.

#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln::kernels::ref {

enum class Activation {
  kNone,
  kRelu,
  kClip,         // min(max(x, alpha), beta); NaN stays NaN
  kLeakyRelu,    // x < 0 ? alpha * x : x
  kSigmoid,      // 1 / (1 + exp(-x))
  kSilu,         // x * sigmoid(x)
  kHardSwish,    // x * max(0, min(1, x / 6 + 0.5))
  kHardSigmoid,  // max(0, min(1, alpha * x + beta)); NaN stays NaN
  kGelu,         // 0.5 * x * (1 + erf(x / sqrt(2)))
  kTanh,
};

struct ActivationParams {
  Activation kind = Activation::kNone;
  // Clip: alpha = min, beta = max. LeakyRelu: alpha. HardSigmoid: alpha, beta. Unused otherwise.
  float alpha = 0.0f;
  float beta = 0.0f;
};

// The ONNX op name ("Relu", "Clip", ..., "Silu" for x * sigmoid(x)); "" for kNone.
std::string_view activation_name(Activation kind);
// The inverse of activation_name; nullopt for an unknown name.
std::optional<Activation> parse_activation(std::string_view name);
// How many of alpha, beta the activation reads (Clip 2, LeakyRelu 1, HardSigmoid 2, others 0).
int activation_param_count(Activation kind);

float apply_activation(const ActivationParams& p, float x);
// data[i] = apply_activation(p, data[i]) for i < n.
void apply_activation(const ActivationParams& p, float* data, int64_t n);

}  // namespace kiln::kernels::ref
