#include "kernels/ref/loss.h"

#include <vector>

#include "kernels/ref/math_util.h"
#include "kernels/ref/softmax.h"

namespace kiln::kernels::ref {

template <typename T, typename I>
void nll_loss(const LossParams& p, const T* input, const I* target, const T* weight, T* out) {
  double total = 0.0;
  double weight_sum = 0.0;
  for (int64_t i = 0; i < p.n; ++i) {
    for (int64_t k = 0; k < p.d; ++k) {
      const int64_t t = static_cast<int64_t>(target[i * p.d + k]);
      double loss = 0.0;
      if (!(p.has_ignore_index && t == p.ignore_index)) {
        const double w = weight != nullptr ? to_double(weight[t]) : 1.0;
        loss = -to_double(input[(i * p.c + t) * p.d + k]) * w;
        weight_sum += w;
      }
      if (p.reduction == LossReduction::kNone) out[i * p.d + k] = from_acc<T>(loss);
      total += loss;
    }
  }
  if (p.reduction == LossReduction::kSum) out[0] = from_acc<T>(total);
  // IEEE division: 0 / 0 is NaN when every target is ignored.
  if (p.reduction == LossReduction::kMean) out[0] = from_acc<T>(total / weight_sum);
}

template <typename T, typename I>
void softmax_cross_entropy_loss(const LossParams& p, const T* scores, const I* target,
                                const T* weight, T* out, T* log_prob) {
  softmax<T>(SoftmaxKind::kLogSoftmax, SoftmaxShape{p.n, p.c, p.d}, scores, log_prob);
  nll_loss<T, I>(p, log_prob, target, weight, out);
}

#define KILN_INSTANTIATE_LOSS_FOR(T, I)                                                           \
  template void nll_loss<T, I>(const LossParams&, const T*, const I*, const T*, T*);              \
  template void softmax_cross_entropy_loss<T, I>(const LossParams&, const T*, const I*, const T*, \
                                                 T*, T*);
#define KILN_INSTANTIATE_LOSS(T)        \
  KILN_INSTANTIATE_LOSS_FOR(T, int32_t) \
  KILN_INSTANTIATE_LOSS_FOR(T, int64_t)
KILN_REF_FOR_FLOAT_TYPES(KILN_INSTANTIATE_LOSS)
#undef KILN_INSTANTIATE_LOSS
#undef KILN_INSTANTIATE_LOSS_FOR

}  // namespace kiln::kernels::ref
