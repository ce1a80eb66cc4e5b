#include "engine/memory_layout.h"

#include <algorithm>

#include "engine/memory_planner.h"

namespace kiln::engine {

std::vector<int64_t> arena_value_bytes(const Plan& plan, const std::vector<ValueClass>& classes,
                                       const ResolvedShapes& shapes) {
  std::vector<int64_t> bytes(plan.graph.values.size(), 0);
  for (size_t v = 0; v < bytes.size(); ++v) {
    if (classes[v] != ValueClass::kArena || !shapes.dims[v]) continue;
    bytes[v] = dims_numel(*shapes.dims[v]) *
               static_cast<int64_t>(dtype_size(plan.graph.values[v].desc.dtype));
  }
  return bytes;
}

MemoryLayout layout_arena(const Plan& plan, const ResolvedShapes& shapes) {
  const ir::Graph& g = plan.graph;
  const std::vector<ValueClass> classes = classify_values(plan);
  const std::vector<int64_t> bytes = arena_value_bytes(plan, classes, shapes);
  // Lifetime of an arena value: from its producer to its last reader among run layers (shape
  // layers read only dims of activations).
  std::vector<int> first(g.values.size(), -1), last(g.values.size(), -1);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    if (plan.layers[n].kind != LayerKind::kRun) continue;
    const int step = static_cast<int>(n);
    for (ir::ValueId v : g.nodes[n].outputs) {
      if (v != ir::kNoValue) first[static_cast<size_t>(v)] = last[static_cast<size_t>(v)] = step;
    }
    for (ir::ValueId v : g.nodes[n].inputs) {
      if (v != ir::kNoValue) last[static_cast<size_t>(v)] = step;
    }
  }
  std::vector<BufferRequest> requests;
  std::vector<size_t> request_value;
  for (size_t v = 0; v < g.values.size(); ++v) {
    if (classes[v] != ValueClass::kArena || first[v] < 0) continue;
    requests.push_back(BufferRequest{bytes[v], first[v], last[v]});
    request_value.push_back(v);
  }
  const MemoryPlan mp = plan_memory(requests);
  MemoryLayout layout;
  layout.offsets.assign(g.values.size(), -1);
  layout.bytes.assign(g.values.size(), 0);
  for (size_t i = 0; i < requests.size(); ++i) {
    layout.offsets[request_value[i]] = mp.offsets[i];
    layout.bytes[request_value[i]] = requests[i].bytes;
  }
  layout.arena_bytes = mp.arena_bytes;
  layout.no_reuse_bytes = mp.no_reuse_bytes;
  layout.peak_live_bytes = mp.peak_live_bytes;
  layout.strategy = mp.strategy;
  return layout;
}

Result<MemoryLayout> plan_arena(const Plan& plan, const std::vector<Dims>& input_dims) {
  KILN_ASSIGN_OR_RETURN(ResolvedShapes shapes, resolve_shapes(plan.graph, plan.layers, input_dims));
  return layout_arena(plan, shapes);
}

bool layout_fits(const MemoryLayout& layout, const std::vector<int64_t>& bytes) {
  for (size_t v = 0; v < bytes.size(); ++v) {
    if (bytes[v] > 0 && (layout.offsets[v] < 0 || bytes[v] > layout.bytes[v])) return false;
  }
  return true;
}

}  // namespace kiln::engine
