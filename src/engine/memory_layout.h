#pragma once
// The arena layout of a plan under given shapes: each activation's size and lifetime (in layer
// order) handed to the memory planner.

#include <vector>

#include "engine/plan.h"
#include "engine/shape_resolver.h"

namespace kiln::engine {

// Bytes of every arena value under `shapes` (0 for values outside the arena).
std::vector<int64_t> arena_value_bytes(const Plan& plan, const std::vector<ValueClass>& classes,
                                       const ResolvedShapes& shapes);

MemoryLayout layout_arena(const Plan& plan, const ResolvedShapes& shapes);

// Resolves shapes at `input_dims`, then lays out the arena.
Result<MemoryLayout> plan_arena(const Plan& plan, const std::vector<Dims>& input_dims);

// True when every value of `bytes` fits the space `layout` reserved for it.
bool layout_fits(const MemoryLayout& layout, const std::vector<int64_t>& bytes);

}  // namespace kiln::engine
