#pragma once
// Recognises the activation applied to a value in any of the spellings PyTorch and other exporters
// produce, for the passes that fuse activations into the op producing the value:
//   Relu, Sigmoid, Tanh, LeakyRelu, HardSigmoid, HardSwish, Gelu (approximate="none");
//   Clip with constant bounds (inputs from opset 11, attributes before; Relu6 is Clip(0, 6));
//   SiLU:      Mul(v, Sigmoid(v));
//   HardSwish: Mul(v, HardSigmoid(v, alpha=1/6, beta=0.5)), and v * Clip(v + 3, 0, 6) / 6 with the
//              division as Div by 6 or Mul by 1/6, applied to the product or to the Clip;
//   GELU:      0.5 * v * (Erf(v / sqrt(2)) + 1) with the 0.5 applied last (torch.onnx), to v, or to
//              the Erf term, and v / sqrt(2) as Div or as Mul by 1/sqrt(2).
// Add and Mul operands match in either order. Constants must be one-element float constants of
// rank <= v's (so that nothing broadcasts) equal to the expected value within 1e-5 (relative
// above 1).

#include <optional>
#include <vector>

#include "ir/graph.h"
#include "ir/graph_edit.h"
#include "kernels/ref/activation.h"

namespace kiln::passes {

struct ActivationMatch {
  kernels::ref::ActivationParams params;
  std::vector<int> nodes;  // the activation's nodes (indices into Graph::nodes), ascending
  ir::ValueId output = ir::kNoValue;  // the activation's result
};

// The activation applied to `v`, when the nodes reading v are exactly one activation's nodes and
// each intermediate value of that activation has a single reader (inside it). v must not be a
// graph output. nullopt when there is no such activation.
std::optional<ActivationMatch> match_activation(const ir::Graph& graph, const ir::GraphIndex& index,
                                                ir::ValueId v);

}  // namespace kiln::passes
