#pragma once
// Small, checked building blocks for graph rewrites. Passes use these instead of editing
// Graph::nodes/values by hand, so that every rewrite keeps the graph's invariants (one producer
// per value, topological order, unique value names).

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace kiln::ir {

struct Use {
  int node;   // index into Graph::nodes
  int input;  // index into that node's inputs
};

// Producer node index (or -1) and every use of each value, computed once; rebuild after edits.
class GraphIndex {
 public:
  explicit GraphIndex(const Graph& graph);
  // -1 for graph inputs, initializers and values nobody produces.
  int producer(ValueId v) const { return producers_[static_cast<size_t>(v)]; }
  const std::vector<Use>& uses(ValueId v) const { return uses_[static_cast<size_t>(v)]; }
  // Readers of v, counting a graph output as a reader.
  size_t num_readers(ValueId v) const;
  // True when exactly one node reads v, once, and v is not a graph output: the producer of v can
  // be fused into that node without anyone else losing the intermediate value.
  bool has_single_reader(ValueId v) const;

 private:
  const Graph* graph_;
  std::vector<int> producers_;
  std::vector<std::vector<Use>> uses_;
};

// A value name not used yet in the graph, derived from `hint` ("conv1_w" -> "conv1_w__1").
std::string unique_value_name(const Graph& graph, std::string_view hint);

// Node names a pass may still give: those of the graph's nodes when made, and each taken since.
// A pass that builds nodes before putting them in the graph names them here, so two new nodes
// with one hint cannot clash either.
class NodeNames {
 public:
  explicit NodeNames(const Graph& graph);
  // `hint` if free, else the first free "<hint><sep><k>" (k = 1, 2, ...); taken from then on.
  std::string take(std::string_view hint, std::string_view sep = "__");

 private:
  std::set<std::string, std::less<>> taken_;
};

// Adds a constant (initializer) value with a unique name derived from `hint`.
ValueId add_constant(Graph& graph, std::string_view hint, Tensor value);

// Every node input reading `from` reads `to` instead. Graph outputs are not touched: a pass that
// removes the producer of a graph output must keep the output's name (see replace_output_value).
void replace_uses(Graph& graph, ValueId from, ValueId to);

// Makes `to`'s producer produce the graph output `from` directly, keeping the output's name for the
// user: the producer's output slot is switched from `to` to `from`, and readers of `to` read
// `from`. `from` must be a graph output whose producer is being removed, `to` a node output that is
// not a graph output itself.
void replace_output_value(Graph& graph, ValueId from, ValueId to);

// Removes the nodes whose `dead` flag is set, keeping the order of the rest.
void remove_nodes(Graph& graph, const std::vector<bool>& dead);

// Removes nodes whose outputs nobody reads (transitively), keeping graph outputs' producers.
// Returns the number of nodes removed.
int remove_dead_nodes(Graph& graph);

// Appends `from`'s origins to `into`'s, keeping graph order (`from` first when it ran first).
void add_origins(Node& into, const Node& from, bool from_runs_first);

// Drops the values no node, graph input or graph output refers to (the leftovers of removed
// nodes, initializers nobody reads any more) and renumbers the rest, keeping their order. Every
// ValueId held outside the graph is invalid afterwards. Returns the number of values dropped.
int compact_values(Graph& graph);

}  // namespace kiln::ir
