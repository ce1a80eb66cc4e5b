#pragma once
// Reference loss kernels: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
//
// Inputs are viewed as [n, c, d] (N, classes, the product of the trailing spatial dims) and the
// targets as [n, d]. Sums are accumulated in double. Targets must already be validated: every
// target is either the ignore index (when there is one) or in [0, c).

#include <cstdint>

namespace kiln::kernels::ref {

enum class LossReduction { kNone, kSum, kMean };

struct LossParams {
  int64_t n = 1;
  int64_t c = 1;
  int64_t d = 1;
  LossReduction reduction = LossReduction::kMean;
  bool has_ignore_index = false;
  int64_t ignore_index = 0;
};

// loss[i, k] = -input[i, target[i, k], k] * weight[target[i, k]] (weight 1 when null), 0 where the
// target is the ignore index. kNone writes the n * d losses; kSum writes their sum; kMean writes
// their sum divided by the sum of the weights of the targets not ignored (0 / 0 = NaN when every
// target is ignored, as in ONNX's reference). T is float, double or Half; I is int32_t or int64_t.
template <typename T, typename I>
void nll_loss(const LossParams& p, const T* input, const I* target, const T* weight, T* out);

// log_prob = log(softmax(scores)) along c, then loss = nll_loss(log_prob, ...). log_prob must hold
// n * c * d elements (the caller may discard it).
template <typename T, typename I>
void softmax_cross_entropy_loss(const LossParams& p, const T* scores, const I* target,
                                const T* weight, T* out, T* log_prob);

}  // namespace kiln::kernels::ref
