#pragma once
// Implicit INT8 quantization of an optimized float graph (TensorRT's --int8 with calibration): each
// convolution and each GEMM / MatMul with constant weights whose input has a range becomes a
// kiln.QConv / kiln.QGemm (ops/kiln_quant.h) with per-channel int8 weights, and its float input is
// quantized to uint8 by a QuantizeLinear placed before its first INT8 reader (one per tensor,
// shared by every reader). Every other layer keeps its float precision. Runs after the fusion
// passes, so that Conv + BN + activation + residual arrive as one kiln.FusedConv and stay fused.
//
// A layer stays float32, with the reason recorded, when its input has no range, its weights are not
// constant, its depth exceeds kMaxQuantDepth, its input is not float32, or --layerPrecisions asks
// for it (see layer_precision.h for how the constraints apply).

#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "ir/graph.h"
#include "quant/layer_precision.h"
#include "quant/tensor_ranges.h"

namespace kiln::quant {

struct QuantizeOptions {
  const RangeTable* ranges = nullptr;  // required
  std::vector<LayerPrecisionRule> layer_precisions;
  PrecisionConstraints constraints = PrecisionConstraints::kNone;
  // The build has FP16 layers too (--best): a layer asked to be fp16 is left in float for the
  // FP16 step (engine/fp16_weights.h) instead of being an unmet request.
  bool fp16 = false;
  // Weights without the model's own scales quantize onto [-weight_qmax, weight_qmax]: 127, or 63
  // (--int8WeightBits=7), whose pairs vpmaddubsw sums exactly (kernels/x86/qkernels.h).
  int weight_qmax = 127;
};

struct QuantizeReport {
  // Per layer (node name) that could run in INT8: why it runs in the precision it does.
  std::map<std::string, std::string> notes;
  // Decisions for the build log; warnings start with "warning: ".
  std::vector<std::string> log;
  int int8_layers = 0;
  int float_layers = 0;  // candidates left in float, for any reason
};

// Rewrites `graph` (shapes inferred) in place; the result is verified and its shapes re-inferred.
Result<QuantizeReport> quantize_layers(ir::Graph& graph, const QuantizeOptions& options);

}  // namespace kiln::quant
