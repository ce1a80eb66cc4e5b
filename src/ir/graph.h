#pragma once
// kiln's graph IR: values (tensors) and nodes in topological order.
//
// Values are owned by the graph and addressed by ValueId. A value is produced by at most one node;
// graph inputs and initializers have no producer. Optional node inputs/outputs that the model
// leaves out are kNoValue. Nodes are kept in a topological order (the importer establishes it;
// passes keep it).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/tensor.h"
#include "ir/attribute.h"
#include "ir/tensor_desc.h"

namespace kiln::ir {

using ValueId = int32_t;
inline constexpr ValueId kNoValue = -1;

struct Value {
  std::string name;
  TensorDesc desc;
  // An initializer's data (or a folded constant's). Set for weights.
  std::optional<Tensor> initializer;
  // A graph input that also has an initializer: the initializer is only a default (ONNX IR >= 4),
  // so nothing may fold it.
  bool is_graph_input = false;
  bool is_graph_output = false;

  // A known constant value: an initializer that is not an overridable graph input.
  const Tensor* constant() const {
    return initializer && !is_graph_input ? &*initializer : nullptr;
  }
};

struct Node {
  std::string name;  // unique in the graph; the importer names unnamed nodes "<op>_<index>"
  std::string op_type;
  std::string domain;  // "" for the default ONNX domain
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  Attributes attrs;
  // The opset version the model imports for this node's domain.
  int opset = 0;
  // The ONNX nodes a fused node stands for, in graph order (empty for an unfused node: it stands
  // for itself). Passes keep it so that logs and `kiln inspect` name fusions by the model's names.
  std::vector<std::string> fused_from;

  // fused_from, or {name} for an unfused node.
  std::vector<std::string> origins() const {
    return fused_from.empty() ? std::vector<std::string>{name} : fused_from;
  }
};

class Graph {
 public:
  std::string name;
  std::vector<Value> values;
  std::vector<Node> nodes;
  std::vector<ValueId> inputs;   // user-facing inputs, in model order (defaulted ones included)
  std::vector<ValueId> outputs;  // in model order
  std::map<std::string, int64_t> opset_imports;  // domain ("" = ai.onnx) -> version
  std::string producer;                          // "pytorch 1.13.1"

  ValueId add_value(std::string name, TensorDesc desc = {});
  // kNoValue when absent.
  ValueId find_value(std::string_view name) const;
  Value& value(ValueId id) { return values[static_cast<size_t>(id)]; }
  const Value& value(ValueId id) const { return values[static_cast<size_t>(id)]; }

  // Index of the node producing each value (-1 for inputs/initializers).
  std::vector<int> producers() const;
  // Every problem with structure: dangling ids, a value produced twice, nodes out of topological
  // order, outputs nobody produces. Run after import and after passes.
  Status verify() const;
  // One line per node: "conv1 = Conv(x[float32[1,3,224,224]], w) -> y[...]"; for logs and tests.
  std::string dump() const;

 private:
  std::map<std::string, ValueId, std::less<>> by_name_;
};

}  // namespace kiln::ir
