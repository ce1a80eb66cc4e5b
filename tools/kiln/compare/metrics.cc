#include "compare/metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kiln::cli::compare {

void ErrorStats::add(std::span<const float> got, std::span<const float> ref, const Tolerance& tol) {
  const double floor = std::max(tol.atol, kRelFloor);
  for (size_t i = 0; i < ref.size(); ++i) {
    const double g = got[i], r = ref[i];
    if (!std::isfinite(g) || !std::isfinite(r)) {
      // NaN/Inf in only one of them is a failure of any tolerance; identical ones are not.
      const bool same = (std::isnan(g) && std::isnan(r)) || g == r;
      nonfinite_ += !same;
      fails_ += !same && tol.active;
      ++count_;
      continue;
    }
    const double e = std::abs(g - r);
    max_abs_ = std::max(max_abs_, e);
    max_rel_ = std::max(max_rel_, e / (std::abs(r) + floor));
    sum_abs_ += e;
    ref_sq_ += r * r;
    got_sq_ += g * g;
    err_sq_ += (g - r) * (g - r);
    dot_ += g * r;
    if (tol.active && e > tol.atol + tol.rtol * std::abs(r)) ++fails_;
    ++count_;
  }
}

double ErrorStats::rel_l2_err() const {
  if (err_sq_ == 0) return 0;
  if (ref_sq_ == 0) return std::numeric_limits<double>::infinity();
  return std::sqrt(err_sq_ / ref_sq_);
}

double ErrorStats::cosine() const {
  if (ref_sq_ == 0 && got_sq_ == 0) return 1;
  if (ref_sq_ == 0 || got_sq_ == 0) return 0;
  return dot_ / (std::sqrt(ref_sq_) * std::sqrt(got_sq_));
}

double ErrorStats::sqnr_db() const {
  if (err_sq_ == 0) return std::numeric_limits<double>::infinity();
  if (ref_sq_ == 0) return -std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(ref_sq_ / err_sq_);
}

std::vector<int64_t> top_k(std::span<const float> scores, int64_t k) {
  std::vector<int64_t> idx(scores.size());
  std::iota(idx.begin(), idx.end(), 0);
  k = std::min<int64_t>(k, static_cast<int64_t>(idx.size()));
  // NaN ranks last so that one NaN score does not make the order undefined.
  auto key = [&](int64_t i) {
    const float v = scores[static_cast<size_t>(i)];
    return std::isnan(v) ? -std::numeric_limits<float>::infinity() : v;
  };
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) { return key(a) > key(b); });
  idx.resize(static_cast<size_t>(std::max<int64_t>(k, 0)));
  return idx;
}

void TopKAgreement::add(std::span<const float> got, std::span<const float> ref, int64_t classes) {
  const size_t c = static_cast<size_t>(classes);
  for (size_t row = 0; row + c <= ref.size(); row += c) {
    const int64_t want = top_k(ref.subspan(row, c), 1)[0];
    const std::vector<int64_t> best = top_k(got.subspan(row, c), 5);
    ++rows;
    top1 += best[0] == want;
    top5 += std::find(best.begin(), best.end(), want) != best.end();
  }
}

int64_t count_correct(std::span<const float> scores, std::span<const int64_t> labels,
                      int64_t classes) {
  int64_t correct = 0;
  const size_t c = static_cast<size_t>(classes);
  for (size_t row = 0; row < labels.size(); ++row) {
    correct += top_k(scores.subspan(row * c, c), 1)[0] == labels[row];
  }
  return correct;
}

}  // namespace kiln::cli::compare
