#include "engine/shape_resolver.h"

#include "ops/evaluate.h"
#include "ops/infer_graph.h"

namespace kiln::engine {
namespace {

// Shape values are tiny; anything larger is data and runs per inference.
constexpr int64_t kMaxShapeValueElements = 1024;

bool reads_only_dims(const ir::Node& node) {
  return node.domain.empty() && (node.op_type == "Shape" || node.op_type == "Size");
}

}  // namespace

std::vector<LayerKind> classify_layers(const ir::Graph& graph) {
  std::vector<bool> shape_value(graph.values.size(), false);
  std::vector<LayerKind> kinds(graph.nodes.size(), LayerKind::kRun);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const ir::Node& node = graph.nodes[n];
    bool inputs_known = true;
    for (ir::ValueId v : node.inputs) {
      if (v == ir::kNoValue) continue;
      inputs_known &= graph.value(v).constant() != nullptr || shape_value[static_cast<size_t>(v)];
    }
    bool small = !node.outputs.empty();
    for (ir::ValueId v : node.outputs) {
      if (v == ir::kNoValue) continue;
      const ir::Value& out = graph.value(v);
      // Any dtype: Resize's scales are float.
      small &= out.desc.dtype != DType::kString && out.desc.has_rank() && !out.is_graph_output &&
               out.desc.rank() <= 1;
      if (out.desc.rank() == 1) {
        const ir::Dim& d = out.desc.dim(0);
        small &= d.is_known() && d.value <= kMaxShapeValueElements;
      }
    }
    if (small && (inputs_known || reads_only_dims(node))) {
      kinds[n] = LayerKind::kShape;
      for (ir::ValueId v : node.outputs) {
        if (v != ir::kNoValue) shape_value[static_cast<size_t>(v)] = true;
      }
    }
  }
  return kinds;
}

Result<ResolvedShapes> resolve_shapes(const ir::Graph& graph, const std::vector<Layer>& layers,
                                      const std::vector<Dims>& input_dims) {
  ResolvedShapes r;
  r.dims.resize(graph.values.size());
  r.shape_values.resize(graph.values.size());
  for (size_t i = 0; i < graph.values.size(); ++i) {
    if (const Tensor* c = graph.values[i].constant()) r.dims[i] = c->dims();
  }
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    r.dims[static_cast<size_t>(graph.inputs[i])] = input_dims[i];
  }
  std::vector<ir::TensorDesc> descs(graph.values.size());
  static const ir::TensorDesc kAbsent;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const ir::Node& node = graph.nodes[n];
    std::vector<const ir::TensorDesc*> in;
    std::vector<const Tensor*> values;
    for (ir::ValueId v : node.inputs) {
      if (v == ir::kNoValue) {
        in.push_back(&kAbsent);
        values.push_back(nullptr);
        continue;
      }
      const auto idx = static_cast<size_t>(v);
      if (!r.dims[idx]) {
        return internal_error("node '{}' ({}): input '{}' has no shape", node.name, node.op_type,
                              graph.value(v).name);
      }
      descs[idx] = ir::TensorDesc::of_dims(graph.value(v).desc.dtype, *r.dims[idx]);
      in.push_back(&descs[idx]);
      const Tensor* c = graph.value(v).constant();
      values.push_back(c != nullptr ? c : (r.shape_values[idx] ? &*r.shape_values[idx] : nullptr));
    }
    const ops::ResolvedOp op = ops::resolve_op(node);
    KILN_ASSIGN_OR_RETURN(ops::NodeInference inf, ops::infer_node(node, op, in, values));
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i] == ir::kNoValue) continue;
      if (!inf.outputs[i].is_static()) {
        return unsupported(
            "node '{}' ({}): the shape of output '{}' ({}) depends on the data; kiln engines plan "
            "every buffer before running, so this op can only run in the reference executor",
            node.name, node.op_type, graph.value(node.outputs[i]).name, inf.outputs[i].to_string());
      }
      r.dims[static_cast<size_t>(node.outputs[i])] = inf.outputs[i].static_dims();
    }
    if (layers[n].kind != LayerKind::kShape) continue;
    // Shape and Size read only their input's dims: give them a tensor without data.
    std::vector<Tensor> dims_only(node.inputs.size());
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i] != nullptr || node.inputs[i] == ir::kNoValue) continue;
      dims_only[i] = Tensor::borrow(in[i]->dtype, in[i]->static_dims(), nullptr, nullptr);
      values[i] = &dims_only[i];
    }
    KILN_ASSIGN_OR_RETURN(std::vector<Tensor> outs,
                          ops::run_node_kernel(node, op, values, inf.outputs));
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i] != ir::kNoValue)
        r.shape_values[static_cast<size_t>(node.outputs[i])] = outs[i];
    }
  }
  return r;
}

}  // namespace kiln::engine
