#pragma once
// Classification postprocessing: softmax over the logits and the k best classes.

#include <cstdint>
#include <span>
#include <vector>

namespace kiln::cli::pipeline {

struct ClassScore {
  int64_t index = 0;
  float score = 0;  // probability after softmax
};

// Numerically stable softmax (the maximum is subtracted before exp), written to `probs`. An empty
// input gives an empty output.
void softmax(std::span<const float> logits, std::vector<float>& probs);

// The min(k, n) highest scores, best first; equal scores keep the lower index first so the result
// does not depend on the sort.
std::vector<ClassScore> top_k(std::span<const float> scores, size_t k);

}  // namespace kiln::cli::pipeline
