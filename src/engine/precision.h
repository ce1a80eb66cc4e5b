#pragma once
// The builder's precision step: after the graph passes, lower convolutions and GEMMs to INT8 when
// the build asks for it, and give every layer its precision and the reason for it.

#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/builder.h"
#include "engine/plan.h"

namespace kiln::engine {

// Rewrites `graph` for the precisions `options` asks; returns the per-layer notes (node name ->
// reason) and logs every decision.
Result<std::map<std::string, std::string>> lower_precision(ir::Graph& graph,
                                                           const BuildOptions& options,
                                                           std::vector<std::string>& log);

// Each layer's precision and note, from its op and the notes lower_precision returned.
void label_precisions(Plan& plan, const std::map<std::string, std::string>& notes);

}  // namespace kiln::engine
