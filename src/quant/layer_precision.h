#pragma once
// Per-layer precision requests, as trtexec takes them: --layerPrecisions=name:fp32,... (a name may
// hold one '*' wildcard) and --precisionConstraints=none|prefer|obey.
//   none    the requests are ignored (as TensorRT ignores ILayer::setPrecision without a
//           precision-constraints builder flag); the build says so in a warning;
//   prefer  a layer runs in the requested precision when kiln can run it so, else in its
//           default precision with a warning;
//   obey    as prefer, but a request that cannot be met fails the build.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace kiln::quant {

enum class PrecisionConstraints { kNone, kPrefer, kObey };
Result<PrecisionConstraints> parse_precision_constraints(std::string_view text);
std::string_view precision_constraints_name(PrecisionConstraints c);

struct LayerPrecisionRule {
  std::string pattern;    // a layer (ONNX node) name, with at most one '*'
  std::string precision;  // fp32, fp16, bf16 or int8
};

// Checks every rule: a known precision, at most one '*', a non-empty pattern.
Status check_layer_precision_rules(std::span<const LayerPrecisionRule> rules);

// True when `name` matches `pattern` ('*' stands for any run of characters, possibly empty).
bool matches_layer_pattern(std::string_view pattern, std::string_view name);

// The rule for a layer that stands for the ONNX nodes `names` (a fused layer has several): an
// exact name wins over a wildcard, a longer wildcard pattern over a shorter one.
const LayerPrecisionRule* find_layer_rule(std::span<const LayerPrecisionRule> rules,
                                          std::span<const std::string> names);

}  // namespace kiln::quant
