#pragma once
// Writing a QDQ model (`kiln quantize`): QuantizeLinear/DequantizeLinear pairs placed where kiln's
// implicit INT8 build runs INT8 layers, so that kiln, ONNX Runtime and TensorRT fuse the same
// layers (docs/quantization.md, "kiln quantize").
//
// Two graphs of the same model take part, both from kiln's pass pipeline:
//  - the fused graph, lowered by quantize_layers with the calibration: which layers run in INT8
//    (kiln.QConv / kiln.QGemm) and which ONNX nodes each stands for (a Conv with its BN, residual
//    Add and activation);
//  - the unfused graph (every pass but the fusions: BN-folded weights, standard ONNX ops), where
//    the Q/DQ nodes go:
//      * a Q -> DQ on the activation input of each INT8 Conv / Gemm / MatMul, and on the residual
//        input of an Add the convolution fuses with; one pair per tensor, shared by its readers;
//        none between a convolution and its activation;
//      * the weights as int8 initializers, symmetric, one scale per output channel, behind a
//        DequantizeLinear (axis 0 for Conv and Gemm transB=1, 1 for Gemm transB=0 and MatMul);
//      * with uint8 activations (ONNX Runtime's form) also on the output of each INT8 layer that is
//        not a graph output, and on a residual convolution's own output (before its Add) when the
//        calibration has its range, so that ONNX Runtime's DQ -> Conv -> Q groups close
//        (QLinearConv, QLinearAdd) and pooling reads uint8; kiln drops these pairs;
//      * with uint8 activations, a Conv's (and a Gemm's, beta = 1) bias as int32 with scale
//        input_scale * weight_scale[c] and zero point 0 behind a DequantizeLinear, the form ONNX
//        Runtime fuses into QLinearConv / QGemm; with int8 (TensorRT's form) biases stay float,
//        as TensorRT's parser takes no DequantizeLinear of int32.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "ir/graph.h"
#include "quant/tensor_ranges.h"

namespace kiln::quant {

// How activations are stored between Q and DQ.
enum class QdqActivationType {
  // int8, symmetric, zero point 0, scale amax / 127, float biases: what TensorRT accepts (the only
  // form it accepts). ONNX Runtime runs it too, but fuses only the groups without an activation.
  kInt8,
  // uint8 with kiln's own encodings (from 0 for a tensor known to be >= 0, else around 128):
  // kiln's explicit build then equals its implicit one exactly. ONNX Runtime only.
  kUint8,
};
Result<QdqActivationType> parse_qdq_activation_type(std::string_view text);

// What the fused, quantized graph says: the ONNX nodes behind each INT8 layer.
struct QdqPlacement {
  // The ONNX name of every Conv / Gemm / MatMul kiln runs in INT8.
  std::set<std::string> int8_layers;
  // A residual Add fused into an INT8 convolution -> every ONNX node of that fused layer.
  std::map<std::string, std::set<std::string>> residual_adds;
  // The output tensor of every INT8 layer (after its fused activation and residual).
  std::set<std::string> int8_outputs;
};

// From a graph after quantize_layers (and before the requantize fusion, which keeps origins too).
QdqPlacement qdq_placement(const ir::Graph& quantized);

struct QdqReport {
  int layers = 0;            // Conv / Gemm / MatMul given Q/DQ inputs and int8 weights
  int activation_pairs = 0;  // Q -> DQ pairs on activations (residuals included)
  int residual_inputs = 0;   // residual Add inputs given a pair
  int int32_biases = 0;
  std::vector<std::string> log;  // per decision; warnings start with "warning: "
};

// Rewrites `unfused` (shapes inferred; standard ONNX) in place: Q/DQ pairs with `ranges`' scales,
// int8 weights, int32 biases. The result is verified and its shapes inferred.
Result<QdqReport> insert_qdq(ir::Graph& unfused, const QdqPlacement& placement,
                             const RangeTable& ranges, QdqActivationType type);

}  // namespace kiln::quant
