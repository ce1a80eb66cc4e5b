#pragma once
// What the fusion passes share: looking up constants, and the driver that applies the rewrites a
// pass finds, keeping the graph's invariants and logging each fusion by its ONNX node names.

#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "ir/graph_edit.h"
#include "passes/pass.h"

namespace kiln::passes {

// The value of `v` when it is a known constant: an initializer (not an overridable graph input) or
// the output of a Constant node holding a tensor. nullptr otherwise.
const Tensor* constant_tensor(const ir::Graph& graph, const ir::GraphIndex& index, ir::ValueId v);

bool is_onnx_op(const ir::Node& node, std::string_view op_type);
bool is_kiln_op(const ir::Node& node, std::string_view op_type);

using ir::same_dim;
// Same dtype and rank, and every dim same_dim: adding one to the other broadcasts nothing.
bool same_shape(const ir::TensorDesc& a, const ir::TensorDesc& b);

// The float dtypes the kiln fused ops implement (float32, float16).
bool is_fusable_dtype(DType t);

// `conv` (a Conv or kiln.FusedConv) as a kiln.FusedConv with the same name, inputs, outputs and
// attributes.
ir::Node as_fused_conv(const ir::Node& conv);
// `gemm` (a Gemm or kiln.FusedGemm) as a kiln.FusedGemm, likewise (Gemm-6's broadcast attribute,
// which FusedGemm's broadcasting makes moot, is dropped).
ir::Node as_fused_gemm(const ir::Node& gemm);

// A Gemm's / FusedGemm's C absent, or of rank <= 1, or [1, N]: one bias per column, which a
// batched A broadcasts and which leaves the kernels' addend free for a residual.
bool c_is_one_row(const ir::Graph& graph, const ir::Node& gemm);

// A rewrite found by a fusion pass: the nodes at `nodes` (indices into Graph::nodes) are replaced
// by `fused`, which takes the place of the last of them in graph order. That place is valid as long
// as the last node is the group's only exit: every other node's outputs are read only inside the
// group, and fused.outputs are the last node's outputs (so graph outputs keep their names).
struct Fusion {
  std::vector<int> nodes;
  ir::Node fused;  // name, op, domain, inputs, outputs and attributes; origins are filled in
};

// Looks for a fusion anchored at node `node`; nullopt when there is none.
using FindFusion =
    std::function<std::optional<Fusion>(const ir::Graph&, const ir::GraphIndex&, int node)>;

// The fusion of node n — the ONNX op `onnx_op`, or kiln.`fused_op` without an activation yet — with
// the activation that follows it (activation_match), into the kiln op `as_fused` makes of node n.
std::optional<Fusion> find_activation_fusion(const ir::Graph& graph, const ir::GraphIndex& index,
                                             int n, std::string_view onnx_op,
                                             std::string_view fused_op,
                                             ir::Node (*as_fused)(const ir::Node&));

// The fusion of node n, an Add(y, r), into y's producer with r as its residual input `z_input`:
// `takes_residual` says whether the producer can take one (it has none yet and no activation
// that would have to apply after the sum); y must be read only by the Add and r have exactly y's
// shape and dtype (no broadcasting). `as_fused` makes the fused node of the producer, which takes
// the Add's place (where r is available). When both operands qualify, the later-produced one is
// fused.
std::optional<Fusion> find_residual_fusion(const ir::Graph& graph, const ir::GraphIndex& index,
                                           int n,
                                           bool (*takes_residual)(const ir::Graph&,
                                                                  const ir::Node&),
                                           ir::Node (*as_fused)(const ir::Node&), size_t z_input);

// Calls `find` at every node in graph order and applies each fusion it returns: fused_from becomes
// the origins of the replaced nodes in graph order, a kiln-domain node gets the kiln opset (added
// to the graph's imports when missing), and the log names the fusion. Returns the number of
// fusions applied.
int apply_fusions(ir::Graph& graph, PassContext& ctx, std::string_view pass,
                  const FindFusion& find);

}  // namespace kiln::passes
