#include "quant/quantize_layers.h"

#include <fmt/format.h>

#include "ir/graph_edit.h"
#include "ops/infer_graph.h"
#include "ops/kiln_fused.h"
#include "quant/int8_lowering.h"

namespace kiln::quant {
namespace {

// The precision the user asks of a layer, and whether the constraints make it binding.
struct Request {
  std::string precision = "int8";
  const LayerPrecisionRule* rule = nullptr;
};

Request request_for(const ir::Node& node, const QuantizeOptions& o) {
  Request r;
  if (o.constraints == PrecisionConstraints::kNone) return r;
  r.rule = find_layer_rule(o.layer_precisions, node.origins());
  if (r.rule) r.precision = r.rule->precision;
  return r;
}

// A request that cannot be met: an error under obey, a warning under prefer.
Status unmet(const ir::Node& node, const Request& req, std::string_view why,
             const QuantizeOptions& o, QuantizeReport& report) {
  const std::string msg =
      fmt::format("layer '{}' ({}): --layerPrecisions asks for {} ('{}'), but {}", node.name,
                  node.op_type, req.precision, req.rule->pattern, why);
  if (o.constraints == PrecisionConstraints::kObey) {
    return unsupported("{} (--precisionConstraints=obey)", msg);
  }
  report.log.push_back("warning: " + msg + "; it runs in fp32");
  return Status::ok();
}

// Inserts the QuantizeLinear nodes before their readers, keeping the topological order.
void splice(ir::Graph& graph, const std::map<int, std::vector<ir::Node>>& inserted) {
  std::vector<ir::Node> nodes;
  nodes.reserve(graph.nodes.size() + inserted.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (auto it = inserted.find(static_cast<int>(i)); it != inserted.end()) {
      nodes.insert(nodes.end(), it->second.begin(), it->second.end());
    }
    nodes.push_back(std::move(graph.nodes[i]));
  }
  graph.nodes = std::move(nodes);
}

// Whether the INT8 node q's weights all lie in [-qmax, qmax].
bool weights_within(const ir::Graph& graph, const ir::Node& q, int qmax) {
  const Tensor* w = graph.value(q.inputs[1]).constant();
  if (w == nullptr) return false;
  for (int8_t v : w->span<int8_t>()) {
    if (v > qmax || v < -qmax) return false;
  }
  return true;
}

Status lower_layer(ir::Graph& graph, int i, InputQuantizer& inputs, const QuantizeOptions& o,
                   QuantizeReport& report) {
  const ir::Node node = graph.nodes[static_cast<size_t>(i)];
  const Request req = request_for(node, o);
  if (req.precision == "fp32") {
    report.notes[node.name] = fmt::format("fp32: --layerPrecisions ('{}')", req.rule->pattern);
    ++report.float_layers;
    return Status::ok();
  }
  if (req.precision == "fp16" && o.fp16) {
    report.notes[node.name] = fmt::format("fp16: --layerPrecisions ('{}')", req.rule->pattern);
    ++report.float_layers;
    return Status::ok();
  }
  if (req.precision != "int8") {
    ++report.float_layers;
    const std::string why = req.precision == "fp16"
                                ? std::string("the build has no --fp16")
                                : fmt::format("kiln has no {} kernels", req.precision);
    report.notes[node.name] = "fp32: " + why;
    return unmet(node, req, why, o, report);
  }
  Result<ir::Node> q = lower_to_int8(graph, i, inputs, o.weight_qmax);
  if (!q.is_ok()) {
    ++report.float_layers;
    report.notes[node.name] = fmt::format("fp32: {}", q.status().message());
    report.log.push_back(fmt::format("layer '{}' ({}) stays fp32: {}", node.name, node.op_type,
                                     q.status().message()));
    return req.rule ? unmet(node, req, q.status().message(), o, report) : Status::ok();
  }
  const std::string in = q->op_type == "QConv" ? "x" : "a";
  // With --int8WeightBits=7, whether this layer's weights are narrow (the model's own weight
  // scales win over the option: int8_lowering.cc).
  const bool narrowed = o.weight_qmax != 127 && weights_within(graph, *q, o.weight_qmax);
  report.notes[node.name] = fmt::format(
      "int8: input '{}' as uint8 (scale {:.6g}, zero point {}){}", graph.value(node.inputs[0]).name,
      q->attrs.get_float(in + "_scale", 0), q->attrs.get_int(in + "_zero_point", 0),
      narrowed ? fmt::format("; weights in [-{0}, {0}]", o.weight_qmax) : "");
  graph.nodes[static_cast<size_t>(i)] = std::move(q).value();
  ++report.int8_layers;
  return Status::ok();
}

}  // namespace

Result<QuantizeReport> quantize_layers(ir::Graph& graph, const QuantizeOptions& options) {
  if (!options.ranges) return internal_error("quantize_layers needs a range table");
  KILN_RETURN_IF_ERROR(check_layer_precision_rules(options.layer_precisions));
  QuantizeReport report;
  if (!options.layer_precisions.empty() && options.constraints == PrecisionConstraints::kNone) {
    report.log.push_back(
        "warning: --layerPrecisions is ignored without --precisionConstraints=prefer or obey");
  }
  const ir::GraphIndex index(graph);
  InputQuantizer inputs(graph, index, *options.ranges);
  const int count = static_cast<int>(graph.nodes.size());
  for (int i = 0; i < count; ++i) {
    if (!is_int8_candidate(graph.nodes[static_cast<size_t>(i)])) continue;
    KILN_RETURN_IF_ERROR(lower_layer(graph, i, inputs, options, report));
  }
  splice(graph, inputs.inserted());
  if (report.int8_layers > 0) graph.opset_imports[std::string(ops::kKilnDomain)] = ops::kKilnOpset;
  KILN_RETURN_IF_ERROR(graph.verify().with_context("after INT8 quantization"));
  KILN_RETURN_IF_ERROR(ops::infer_graph_shapes(graph).with_context("after INT8 quantization"));
  report.log.push_back(fmt::format("int8: {} layers in INT8, {} left in float; ranges from {}",
                                   report.int8_layers, report.float_layers,
                                   options.ranges->origin()));
  return report;
}

}  // namespace kiln::quant
