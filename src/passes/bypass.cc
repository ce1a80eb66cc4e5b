#include "passes/bypass.h"

#include "ir/graph_edit.h"

namespace kiln::passes {

bool can_bypass(const ir::Graph& graph, ir::ValueId in, ir::ValueId out) {
  if (!graph.value(out).is_graph_output) return true;
  const ir::Value& v = graph.value(in);
  return !v.is_graph_input && !v.initializer && !v.is_graph_output;
}

void bypass(ir::Graph& graph, ir::ValueId in, ir::ValueId out) {
  assert(can_bypass(graph, in, out));
  if (graph.value(out).is_graph_output) {
    ir::replace_output_value(graph, out, in);
  } else {
    ir::replace_uses(graph, out, in);
  }
}

}  // namespace kiln::passes
