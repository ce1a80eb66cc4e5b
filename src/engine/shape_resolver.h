#pragma once
// Derives every value's concrete dims from concrete input dims, evaluating shape layers (the
// Shape -> Gather -> Concat -> Reshape chains of a dynamic model) along the way. The builder runs
// it at each profile's max shapes to plan memory; an execution context runs it whenever its input
// shapes change. Data-dependent output shapes (NonZero, NonMaxSuppression) are refused: an engine
// plans every buffer before it runs.

#include <optional>
#include <vector>

#include "base/status.h"
#include "engine/plan.h"
#include "ir/graph.h"

namespace kiln::engine {

struct ResolvedShapes {
  std::vector<std::optional<Dims>> dims;            // per value; nullopt for values nobody produces
  std::vector<std::optional<Tensor>> shape_values;  // per value: shape layers' results
};

// `input_dims` has one entry per graph input. `layers` gives each node's kind; shape layers are
// evaluated with their reference kernels.
Result<ResolvedShapes> resolve_shapes(const ir::Graph& graph, const std::vector<Layer>& layers,
                                      const std::vector<Dims>& input_dims);

// Decides which nodes are shape layers: deterministic nodes whose inputs are constants, shape
// values or (for Shape and Size) anything, with small outputs (rank <= 1: shapes, Resize scales)
// that are not graph outputs.
std::vector<LayerKind> classify_layers(const ir::Graph& graph);

}  // namespace kiln::engine
