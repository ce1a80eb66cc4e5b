#include "engine/precision.h"

#include <fmt/format.h>

#include "engine/fp16_weights.h"
#include "ir/graph_edit.h"
#include "ops/infer_graph.h"
#include "ops/kiln_fused.h"
#include "ops/kiln_layout.h"
#include "quant/concat_hoist.h"
#include "quant/maxpool_hoist.h"
#include "quant/quantize_layers.h"
#include "quant/quantize_merge.h"
#include "quant/requantize_fusion.h"
#include "quant/scale_quantize_fusion.h"

namespace kiln::engine {
namespace {

// Rules that ask for a precision the build does not enable.
Status check_rules_without_int8(const BuildOptions& o, std::vector<std::string>& log) {
  if (o.precision_constraints == quant::PrecisionConstraints::kNone) {
    if (!o.layer_precisions.empty()) {
      log.push_back(
          "warning: --layerPrecisions is ignored without --precisionConstraints=prefer or obey");
    }
    return Status::ok();
  }
  KILN_RETURN_IF_ERROR(quant::check_layer_precision_rules(o.layer_precisions));
  for (const quant::LayerPrecisionRule& r : o.layer_precisions) {
    if (r.precision == "fp32" || (r.precision == "fp16" && o.fp16)) continue;
    const std::string msg = fmt::format(
        "--layerPrecisions asks for {} on '{}', but the build {}", r.precision, r.pattern,
        r.precision == "int8"   ? "has no --int8"
        : r.precision == "fp16" ? "has no --fp16"
                                : fmt::format("has no {} kernels", r.precision));
    if (o.precision_constraints == quant::PrecisionConstraints::kObey) {
      return invalid_argument("{} (--precisionConstraints=obey)", msg);
    }
    log.push_back("warning: " + msg + "; those layers run in fp32");
  }
  return Status::ok();
}

// The INT8 step: the notes of the layers it considered.
Result<std::map<std::string, std::string>> lower_int8(ir::Graph& graph, const BuildOptions& options,
                                                      const quant::RangeTable* explicit_scales,
                                                      std::vector<std::string>& log) {
  if (!options.int8 && !explicit_scales) {
    KILN_RETURN_IF_ERROR(check_rules_without_int8(options, log));
    return std::map<std::string, std::string>{};
  }
  if (explicit_scales && options.calibration) {
    log.push_back("warning: --calib is ignored: the model's own Q/DQ scales say what runs in INT8");
  }
  const quant::RangeTable ranges = explicit_scales ? *explicit_scales
                                   : options.calibration
                                       ? quant::RangeTable::from_calibration(*options.calibration)
                                       : quant::RangeTable::placeholders();
  if (ranges.is_placeholder()) {
    log.push_back(
        "warning: --int8 without calibration: placeholder ranges (inputs +-2, other tensors "
        "+-4, as trtexec) - the engine is for measuring speed, its outputs are not accurate");
  }
  quant::QuantizeOptions q{&ranges, options.layer_precisions, options.precision_constraints,
                           options.fp16, options.int8_weight_bits == 7 ? 63 : 127};
  if (options.int8_weight_bits == 7) {
    log.push_back(
        "int8: 7-bit weights ([-63, 63], --int8WeightBits=7): vpmaddubsw runs them exactly on "
        "CPUs without VNNI; a QDQ model's weights keep their scales");
  }
  KILN_ASSIGN_OR_RETURN(quant::QuantizeReport report, quant::quantize_layers(graph, q));
  for (std::string& line : report.log) log.push_back(std::move(line));
  // Each hoist can open the other's (a Concat of pooled parts, a pooling of a Concat), and a merge
  // of two quantizations of one tensor either's.
  int pools = 0, concats = 0;
  for (int more = 1; more > 0;) {
    const int c = quant::hoist_quantize_over_concat(graph, log);
    const int p = quant::hoist_quantize_over_maxpool(graph, log);
    concats += c;
    pools += p;
    more = c + p + quant::merge_duplicate_quantizes(graph);
  }
  const int requantized = quant::fuse_requantize(graph, ranges, log);
  const int scaled = quant::fuse_scale_quantize(graph, log);
  ir::remove_dead_nodes(graph);
  ir::compact_values(graph);
  KILN_RETURN_IF_ERROR(graph.verify().with_context("after the requantize fusion"));
  KILN_RETURN_IF_ERROR(ops::infer_graph_shapes(graph).with_context("after the requantize fusion"));
  log.push_back(fmt::format("int8: {} layers write uint8 for the next INT8 layers", requantized));
  if (pools > 0) log.push_back(fmt::format("int8: {} MaxPool layers pool uint8", pools));
  if (concats > 0) log.push_back(fmt::format("int8: Concats joining uint8 tensors: {}", concats));
  if (scaled > 0) {
    log.push_back(
        fmt::format("int8: {} channel scalings quantize their product in one pass", scaled));
  }
  return std::move(report.notes);
}

}  // namespace

Result<PrecisionDecisions> lower_precision(ir::Graph& graph, const BuildOptions& options,
                                           const quant::RangeTable* explicit_scales,
                                           std::vector<std::string>& log) {
  PrecisionDecisions d;
  KILN_ASSIGN_OR_RETURN(d.notes, lower_int8(graph, options, explicit_scales, log));
  if (options.fp16) KILN_RETURN_IF_ERROR(lower_fp16(graph, options, d.notes, d.fp16_layers, log));
  return d;
}

namespace {

// Why an ONNX op the INT8 hoists left on uint8 tensors (a MaxPool, a Concat; a Transpose or
// kiln.MaxPoolNhwc qconv_nhwc makes) computes what its float original did; nullptr otherwise.
const char* uint8_movement_note(const ir::Graph& g, const ir::Node& node) {
  const bool nhwc_pool = node.domain == ops::kKilnDomain && node.op_type == ops::kMaxPoolNhwc;
  if ((!node.domain.empty() && !nhwc_pool) || node.outputs.empty() ||
      g.value(node.outputs[0]).desc.dtype != DType::kU8) {
    return nullptr;
  }
  if (node.op_type == "MaxPool" || nhwc_pool) {
    return "pools the uint8 tensor (the max commutes with the quantization)";
  }
  if (node.op_type == "Concat") return "joins uint8 tensors quantized with its output's encoding";
  if (node.op_type == "Transpose") {
    return "moves uint8 values between NCHW and NHWC (qconv_nhwc): the encoding is kept";
  }
  return nullptr;
}

}  // namespace

void label_precisions(Plan& plan, const PrecisionDecisions& decisions) {
  const std::map<std::string, std::string>& notes = decisions.notes;
  for (size_t n = 0; n < plan.graph.nodes.size(); ++n) {
    const ir::Node& node = plan.graph.nodes[n];
    Layer& layer = plan.layers[n];
    const bool int8 =
        node.domain == "kiln" &&
        (node.op_type == "QConv" || node.op_type == "QConvNhwc" || node.op_type == "QGemm");
    const bool quantize = node.domain.empty() && node.op_type == "QuantizeLinear" &&
                          plan.graph.value(node.outputs[0]).desc.dtype == DType::kU8;
    if (int8) layer.precision = "int8";
    if (const char* note = uint8_movement_note(plan.graph, node)) {
      layer.precision = "int8";
      layer.precision_note = note;
    }
    if (decisions.fp16_layers.count(node.name) > 0) layer.precision = kFp16Precision;
    if (quantize) {
      layer.precision = "fp32->uint8";
      layer.precision_note = "quantizes the input of INT8 layers";
    }
    if (auto it = notes.find(node.name); it != notes.end()) layer.precision_note = it->second;
    if (int8 && node.attrs.get_int("output_type", 1) == 2) layer.precision_note += "; writes uint8";
  }
}

}  // namespace kiln::engine
