#pragma once
// `kiln compare --all-layers`: every tensor an engine layer writes that also exists, by name, in
// the reference graph is compared with the reference's (fusion removes the others). Layers are
// ranked by the error they add: the relative L2 error of the layer's output minus the worst
// relative L2 error of its inputs that were compared (graph inputs count 0; an input that fusion
// renamed counts as not compared and is ignored). docs/accuracy.md has the definitions.

#include <map>
#include <string>
#include <vector>

#include "base/tensor.h"
#include "compare/metrics.h"
#include "ir/graph.h"
#include "runtime/execution_context.h"
#include "runtime/reference_executor.h"

namespace kiln::cli::compare {

// The reference's tensors of one batch, by name.
using ReferenceValues = std::map<std::string, Tensor, std::less<>>;

// Makes `ref` copy every node output named in `wanted` into `out` as it runs.
void capture_reference(runtime::ReferenceExecutor& ref, const ir::Graph& model,
                       std::vector<std::string> wanted, ReferenceValues& out);

struct LayerRecord {
  std::string tensor;                   // the reference tensor's name
  std::string engine_tensor;            // the engine's (differs for a uint8 "<tensor>_u8")
  std::string layer;                    // the engine layer that writes it
  std::string op_type;                  // of that layer (kiln.FusedConv, ...)
  std::vector<std::string> fused_from;  // the ONNX nodes it stands for (empty: unfused)
  std::vector<std::string> inputs;      // tensor names of the layer's inputs
  ErrorStats err;
  std::string not_comparable;  // set when the tensor could not be compared (dtype, shape)
};

class LayerComparer {
 public:
  LayerComparer(const runtime::Engine& engine, const ir::Graph& model);

  // Tensor names to capture from the reference.
  std::vector<std::string> tensors() const;
  // Compares each layer's outputs with `refs` as the context runs them; detach() after execute().
  void attach(runtime::ExecutionContext& ctx, const ReferenceValues& refs, const Tolerance& tol);
  static void detach(runtime::ExecutionContext& ctx) { ctx.set_layer_callback(nullptr); }
  // The records, with a reason for every tensor no layer run compared (a shape layer's int64
  // output is computed at build or shape time, never by a kernel).
  std::vector<LayerRecord> finished_records() const;

 private:
  void compare_layer(runtime::ExecutionContext& ctx, size_t node, const ReferenceValues& refs,
                     const Tolerance& tol);

  const runtime::Engine& engine_;
  std::vector<LayerRecord> records_;    // in engine layer order
  std::vector<ir::ValueId> values_;     // the engine value of each record
  std::map<ir::ValueId, size_t> slot_;  // engine value -> record
};

struct RankedLayer {
  const LayerRecord* record;
  double rel_err;        // of the layer's output
  double input_rel_err;  // worst of its compared inputs (0 for none)
  double added;          // rel_err - input_rel_err
};

// Comparable layers, largest added error first (ties: engine order).
std::vector<RankedLayer> rank_layers(const std::vector<LayerRecord>& records,
                                     const std::vector<std::string>& graph_inputs);

}  // namespace kiln::cli::compare
