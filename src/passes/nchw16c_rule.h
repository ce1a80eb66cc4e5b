#pragma once
// kiln's own blocked kernels' rule, which the layout passes (nchw16c_layout, nchw16c_scale_fusion)
// follow when the builder gives them no PassContext::runs_blocked (tests, tools): the kernels need
// AVX2 + FMA, and run convolutions with group 1 (a 1x1 with no padding is the one a channel scale
// fuses into) and depthwise ones.

#include <algorithm>

#include "base/cpu_features.h"
#include "ir/graph.h"

namespace kiln::passes {

inline bool host_runs_blocked_kernels() { return (host_cpu_features() & kIsaAvx2) == kIsaAvx2; }

// `conv` (Conv, FusedConv or ConvNchw16c) with weights of dims `w` [M, C / group, kH, kW] is a 1x1
// convolution with group 1 and no padding.
inline bool blocked_pointwise(const ir::Node& conv, const Dims& w) {
  const std::vector<int64_t> pads = conv.attrs.get_ints("pads");
  return conv.attrs.get_int("group", 1) == 1 && w.size() == 4 && w[2] == 1 && w[3] == 1 &&
         std::all_of(pads.begin(), pads.end(), [](int64_t v) { return v == 0; });
}

}  // namespace kiln::passes
