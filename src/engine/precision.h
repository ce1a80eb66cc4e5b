#pragma once
// The builder's precision step: after the graph passes, lower convolutions and GEMMs to INT8 when
// the build asks for it, and give every layer its precision and the reason for it.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/builder.h"
#include "engine/plan.h"
#include "quant/tensor_ranges.h"

namespace kiln::engine {

// After the graph passes: rewrites `graph` for the precisions asked (--int8, or `explicit_scales`,
// a QDQ model's scales that the qdq_extraction pass found); returns the per-layer notes (node name
// -> reason) and logs every decision.
Result<std::map<std::string, std::string>> lower_precision(ir::Graph& graph,
                                                           const BuildOptions& options,
                                                           const quant::RangeTable* explicit_scales,
                                                           std::vector<std::string>& log);

// Each layer's precision and note, from its op and the notes lower_precision returned.
void label_precisions(Plan& plan, const std::map<std::string, std::string>& notes);

}  // namespace kiln::engine
