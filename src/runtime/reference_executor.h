#pragma once
// Runs an ir::Graph node by node with the reference kernels: the oracle that every optimized engine
// is compared against. Slow on purpose; nothing here is tuned.

#include <cstdint>
#include <functional>
#include <vector>

#include "base/status.h"
#include "ir/graph.h"
#include "runtime/input_check.h"

namespace kiln::runtime {

struct ExecutorOptions {
  // Largest tensor, in bytes, a node may produce. A larger output fails with a Status naming the
  // node before anything is allocated: a model whose shapes ask for more than the machine can hold
  // must get an error, not a process killed by the OOM killer or its zero-fill running for
  // minutes. 0 means the default, half of this machine's physical memory (kiln's absolute cap of
  // 64 GiB per tensor, see check_dims, applies on top).
  uint64_t max_tensor_bytes = 0;
};

class ReferenceExecutor {
 public:
  // Fails when the graph has unsupported ops (all listed) or broken structure.
  static Result<ReferenceExecutor> create(const ir::Graph& graph, ExecutorOptions options = {});

  // Runs the graph. `inputs` by name; inputs with an initializer may be left out. Returns the graph
  // outputs in order. Each node's outputs are checked against its shape function's result, so a
  // shape function that disagrees with its kernel is reported as an internal error naming the node.
  Result<std::vector<Tensor>> run(const NamedTensors& inputs) const;

  // Called after each node with its outputs (for debugging and per-layer comparison tools).
  using NodeObserver = std::function<void(const ir::Node&, const std::vector<Tensor>&)>;
  void set_observer(NodeObserver observer) { observer_ = std::move(observer); }

 private:
  ReferenceExecutor(const ir::Graph& graph, uint64_t max_tensor_bytes);
  Status run_node(const ir::Node& node, std::vector<std::optional<Tensor>>& values) const;
  Status check_output_size(const ir::Node& node, size_t i, const ir::TensorDesc& desc) const;

  const ir::Graph* graph_;
  uint64_t max_tensor_bytes_;
  // Values each node is the last reader of; they are released after it runs (graph outputs never
  // are).
  std::vector<std::vector<ir::ValueId>> release_after_;
  NodeObserver observer_;
};

}  // namespace kiln::runtime
