#pragma once
// The error figures of `kiln compare` (definitions in docs/accuracy.md). An ErrorStats accumulates
// over batches, so every figure covers all the samples compared, not a mean of per-batch figures.

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

namespace kiln::cli::compare {

// Relative errors divide by |ref| + max(atol, kRelFloor), so that exact zeros of the reference
// (ReLU outputs) do not turn a 1e-9 difference into an infinite relative error.
inline constexpr double kRelFloor = 1e-6;

struct Tolerance {
  double atol = 0, rtol = 0;
  bool active = false;  // --atol or --rtol given: elements outside allclose count as failures
};

class ErrorStats {
 public:
  // Adds elements (same count): `got` is the engine's, `ref` the reference's.
  void add(std::span<const float> got, std::span<const float> ref, const Tolerance& tol);

  int64_t elements() const { return count_; }
  double max_abs_err() const { return max_abs_; }
  double max_rel_err() const { return max_rel_; }
  double mean_abs_err() const { return count_ ? sum_abs_ / static_cast<double>(count_) : 0; }
  // ||got - ref||2 / ||ref||2; 0 when both are zero, infinite when only ref is.
  double rel_l2_err() const;
  // <got, ref> / (||got|| ||ref||); 1 when both are all zeros, 0 when only one is.
  double cosine() const;
  // 10 log10(||ref||^2 / ||got - ref||^2); +infinity when equal.
  double sqnr_db() const;
  // Elements with |got - ref| > atol + rtol |ref| (numpy.allclose's test), and NaN mismatches.
  int64_t allclose_failures() const { return fails_; }
  int64_t nonfinite() const { return nonfinite_; }

 private:
  int64_t count_ = 0, fails_ = 0, nonfinite_ = 0;
  double max_abs_ = 0, max_rel_ = 0, sum_abs_ = 0;
  double ref_sq_ = 0, got_sq_ = 0, err_sq_ = 0, dot_ = 0;
};

// Indices of the k largest values, largest first; ties go to the lower index (as a stable sort
// does), so the result is deterministic.
std::vector<int64_t> top_k(std::span<const float> scores, int64_t k);

// Agreement of an engine's classifier scores with the reference's over rows of `classes` scores:
// top-1: the engine's top class equals the reference's; top-5: the reference's top class is among
// the engine's 5 best (min(5, classes)). Counts of rows; accumulates over batches.
struct TopKAgreement {
  int64_t rows = 0, top1 = 0, top5 = 0;
  void add(std::span<const float> got, std::span<const float> ref, int64_t classes);
  double top1_percent() const { return rows ? 100.0 * top1 / rows : 0; }
  double top5_percent() const { return rows ? 100.0 * top5 / rows : 0; }
};

// Rows whose top class equals the label (labels.size() rows of `classes` scores).
int64_t count_correct(std::span<const float> scores, std::span<const int64_t> labels,
                      int64_t classes);

}  // namespace kiln::cli::compare
