#include "debug/precision_search.h"

#include <fmt/format.h>

namespace kiln::cli::debug {

Result<SearchResult> search_fp32_prefix(
    const std::vector<std::string>& ranked, const Evaluate& evaluate,
    const std::function<void(size_t k, const Trial&)>& on_trial) {
  if (ranked.empty()) return invalid_argument("no INT8 layers to search over");
  SearchResult r;
  // Invariant: the prefix of length hi passes (all of them, checked by the caller), lo fails.
  size_t lo = 0, hi = ranked.size();
  std::optional<Trial> hi_trial;
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    const std::vector<std::string> prefix(ranked.begin(), ranked.begin() + mid);
    KILN_ASSIGN_OR_RETURN(Trial t, evaluate(prefix));
    ++r.builds;
    if (on_trial) on_trial(mid, t);
    if (t.passed) {
      hi = mid;
      hi_trial = std::move(t);
    } else {
      lo = mid;
    }
  }
  r.fp32_layers.assign(ranked.begin(), ranked.begin() + hi);
  if (!hi_trial) {  // only the whole ranking was known to pass: measure it for the report
    KILN_ASSIGN_OR_RETURN(hi_trial, evaluate(r.fp32_layers));
    ++r.builds;
    if (on_trial) on_trial(hi, *hi_trial);
  }
  r.trial = std::move(*hi_trial);
  r.found = r.trial.passed;
  return r;
}

Result<SearchResult> prune_fp32_set(SearchResult r, const Evaluate& evaluate,
                                    const std::function<void(size_t k, const Trial&)>& on_trial,
                                    int max_tries) {
  if (!r.found) return r;
  int tries = 0;
  for (size_t i = r.fp32_layers.size(); i-- > 0 && tries < max_tries && r.fp32_layers.size() > 1;) {
    std::vector<std::string> fewer = r.fp32_layers;
    fewer.erase(fewer.begin() + static_cast<std::ptrdiff_t>(i));
    KILN_ASSIGN_OR_RETURN(Trial t, evaluate(fewer));
    ++tries;
    ++r.builds;
    if (on_trial) on_trial(fewer.size(), t);
    if (t.passed) {
      r.fp32_layers = std::move(fewer);
      r.trial = std::move(t);
    }
  }
  return r;
}

std::string layer_precisions_flag(const std::vector<std::string>& fp32_layers) {
  std::string out = "--layerPrecisions=";
  for (size_t i = 0; i < fp32_layers.size(); ++i) {
    const std::string& n = fp32_layers[i];
    const bool quote = n.find_first_of(",:'\" ") != std::string::npos;
    const char q = n.find('\'') != std::string::npos ? '"' : '\'';
    out += (i ? "," : "") + (quote ? fmt::format("{}{}{}", q, n, q) : n) + ":fp32";
  }
  return out;
}

}  // namespace kiln::cli::debug
