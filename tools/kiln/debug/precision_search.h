#pragma once
// The search of `kiln debug precision`: the fewest INT8 layers to keep in FP32 so that the engine
// meets a tolerance. Layers come ranked (most harmful first); the search finds by bisection the
// shortest prefix of the ranking that passes, assuming that keeping more layers in FP32 never
// makes the engine worse (then it is exact; otherwise it is what the ranking suggests).

#include <functional>
#include <string>
#include <vector>

#include "base/status.h"

namespace kiln::cli::debug {

struct Trial {
  bool passed = false;
  double cosine = 0;  // the worst output's
  std::string detail;
};

// Builds and checks an engine with `fp32_layers` kept in FP32 (the rest of the INT8 layers INT8).
using Evaluate = std::function<Result<Trial>(const std::vector<std::string>& fp32_layers)>;

struct SearchResult {
  bool found = false;
  std::vector<std::string> fp32_layers;  // the smallest passing prefix of the ranking
  Trial trial;                           // its result
  int builds = 0;
};

// `ranked` must not be empty; the caller has checked that all of it in FP32 passes and none does
// not. Calls `evaluate` about log2(ranked.size()) times; `on_trial` sees each.
Result<SearchResult> search_fp32_prefix(
    const std::vector<std::string>& ranked, const Evaluate& evaluate,
    const std::function<void(size_t k, const Trial&)>& on_trial);

// Then drops from a passing set every layer it can do without, one at a time from the least
// harmful (the end of the ranking): the ranking blames the layer whose output carries an error,
// while the cure may be its reader (which quantizes that output). At most `max_tries` builds.
Result<SearchResult> prune_fp32_set(SearchResult found, const Evaluate& evaluate,
                                    const std::function<void(size_t k, const Trial&)>& on_trial,
                                    int max_tries = 16);

// "--layerPrecisions=a:fp32,'b,c':fp32" (names with ',' ':' or quotes are quoted, as the option
// parser reads them).
std::string layer_precisions_flag(const std::vector<std::string>& fp32_layers);

}  // namespace kiln::cli::debug
