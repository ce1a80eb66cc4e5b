#include "pipeline/classify.h"

#include <algorithm>
#include <cmath>

namespace kiln::cli::pipeline {

void softmax(std::span<const float> logits, std::vector<float>& probs) {
  probs.resize(logits.size());
  if (logits.empty()) return;
  const float top = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (size_t i = 0; i < logits.size(); ++i) {
    probs[i] = std::exp(logits[i] - top);  // <= 1: no overflow for any logit
    sum += probs[i];
  }
  for (float& p : probs) p = static_cast<float>(p / sum);
}

std::vector<ClassScore> top_k(std::span<const float> scores, size_t k) {
  std::vector<ClassScore> all(scores.size());
  for (size_t i = 0; i < scores.size(); ++i) all[i] = {static_cast<int64_t>(i), scores[i]};
  k = std::min(k, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end(),
                    [](const ClassScore& a, const ClassScore& b) {
                      return a.score > b.score || (a.score == b.score && a.index < b.index);
                    });
  all.resize(k);
  return all;
}

}  // namespace kiln::cli::pipeline
