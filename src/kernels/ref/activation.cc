#include "kernels/ref/activation.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

namespace kiln::kernels::ref {
namespace {

struct Entry {
  Activation kind;
  std::string_view name;
  int params;
};

constexpr std::array<Entry, 10> kEntries = {{
    {Activation::kNone, "", 0},
    {Activation::kRelu, "Relu", 0},
    {Activation::kClip, "Clip", 2},
    {Activation::kLeakyRelu, "LeakyRelu", 1},
    {Activation::kSigmoid, "Sigmoid", 0},
    {Activation::kSilu, "Silu", 0},
    {Activation::kHardSwish, "HardSwish", 0},
    {Activation::kHardSigmoid, "HardSigmoid", 2},
    {Activation::kGelu, "Gelu", 0},
    {Activation::kTanh, "Tanh", 0},
}};

const Entry& entry(Activation kind) {
  for (const Entry& e : kEntries) {
    if (e.kind == kind) return e;
  }
  return kEntries[0];
}

// Evaluated so that exp never overflows, as the Sigmoid reference kernel does.
float sigmoid(float x) {
  if (x >= 0.0f) return 1.0f / (1.0f + std::exp(-x));
  const float e = std::exp(x);
  return e / (1.0f + e);
}

float clip(float x, float lo, float hi) {
  if (std::isnan(x)) return x;
  return std::min(std::max(x, lo), hi);
}

}  // namespace

std::string_view activation_name(Activation kind) { return entry(kind).name; }

std::optional<Activation> parse_activation(std::string_view name) {
  for (const Entry& e : kEntries) {
    if (e.name == name) return e.kind;
  }
  return std::nullopt;
}

int activation_param_count(Activation kind) { return entry(kind).params; }

float apply_activation(const ActivationParams& p, float x) {
  switch (p.kind) {
    case Activation::kNone:
      return x;
    case Activation::kRelu:
      return x < 0.0f ? 0.0f : x;
    case Activation::kClip:
      return clip(x, p.alpha, p.beta);
    case Activation::kLeakyRelu:
      return x < 0.0f ? p.alpha * x : x;
    case Activation::kSigmoid:
      return sigmoid(x);
    case Activation::kSilu:
      return x * sigmoid(x);
    case Activation::kHardSwish:
      return x * std::max(0.0f, std::min(1.0f, x / 6.0f + 0.5f));
    case Activation::kHardSigmoid:
      return std::clamp(p.alpha * x + p.beta, 0.0f, 1.0f);  // NaN stays NaN
    case Activation::kGelu:
      return 0.5f * x * (1.0f + std::erf(x / std::numbers::sqrt2_v<float>));
    case Activation::kTanh:
      return std::tanh(x);
  }
  return x;
}

void apply_activation(const ActivationParams& p, float* data, int64_t n) {
  if (p.kind == Activation::kNone) return;
  for (int64_t i = 0; i < n; ++i) data[i] = apply_activation(p, data[i]);
}

}  // namespace kiln::kernels::ref
