#pragma once
// The builder's precision step: after the graph passes, lower convolutions and GEMMs to INT8 and
// FP16 when the build asks for it, and give every layer its precision and the reason for it.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/builder.h"
#include "engine/plan.h"
#include "quant/tensor_ranges.h"

namespace kiln::engine {

// What the precision step decided: per layer (node name) the reason for its precision, and the
// layers that became FP16.
struct PrecisionDecisions {
  std::map<std::string, std::string> notes;
  std::set<std::string> fp16_layers;
};

// After the graph passes: rewrites `graph` for the precisions asked (--int8, or `explicit_scales`,
// a QDQ model's scales that the qdq_extraction pass found; then --fp16 for the convolutions and
// GEMMs left in float) and logs every decision.
Result<PrecisionDecisions> lower_precision(ir::Graph& graph, const BuildOptions& options,
                                           const quant::RangeTable* explicit_scales,
                                           std::vector<std::string>& log);

// Each layer's precision and note, from its op and what lower_precision decided.
void label_precisions(Plan& plan, const PrecisionDecisions& decisions);

}  // namespace kiln::engine
