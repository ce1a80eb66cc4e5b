#pragma once
// A graph optimization pass: a named rewrite of an ir::Graph that keeps its outputs' values.
//
// Each pass lives in its own file (passes/<name>.{h,cc}) and exposes one PassDef; the order in
// which they run is decided in one place, passes/pipeline.cc. A pass must leave the graph valid
// (Graph::verify) with correct descs on every value it creates, and must record each rewrite in
// the log, naming the ONNX nodes involved (Node::origins()), so the verbose build log can say
// "fused Conv_0 + BatchNormalization_1 + Relu_2".

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "ir/graph.h"
#include "quant/tensor_ranges.h"

namespace kiln::passes {

struct PassLogEntry {
  std::string pass;
  std::string message;
};

class PassLog {
 public:
  // "Conv_0 + BatchNormalization_1 -> Conv_0 (BatchNormalization folded into the weights)".
  void add(std::string_view pass, std::string message);
  // The usual fusion message: "fused <a + b + c> into <result_op> '<result_name>'".
  void fused(std::string_view pass, std::span<const std::string> onnx_nodes,
             std::string_view result_op, std::string_view result_name);
  const std::vector<PassLogEntry>& entries() const { return entries_; }
  // Entries made by one pass.
  size_t count(std::string_view pass) const;

 private:
  std::vector<PassLogEntry> entries_;
};

// Whether some tactic runs `conv` on blocked tensors: a float32 2-D convolution a layout pass
// would make, given as that kiln.ConvNchw16c node (nchw16c_layout's inputs still the plain values).
using BlockedConvCheck = std::function<bool(const ir::Graph& graph, const ir::Node& conv)>;

struct PassContext {
  PassLog& log;
  // Where qdq_extraction records a QDQ model's scales; nullptr leaves Q/DQ nodes in the graph.
  quant::RangeTable* explicit_scales = nullptr;
  // The builder asks the tactics it may use (sources, CPU); null: kiln's own blocked kernels'
  // rule (1x1 with group 1 and no padding, and depthwise).
  BlockedConvCheck runs_blocked;
};

// What a pass leaves in the graph: standard ONNX ops, or kiln's own fused ones (kiln.FusedConv,
// kiln.FusedGemm, kiln.Attention, ...), which a model written for other runtimes must not hold
// (`kiln quantize` writes its QDQ model from the graph before every kFusion pass).
enum class PassKind { kOnnx, kFusion };

struct PassDef {
  std::string_view name;         // stable, used by --disablePasses and in logs
  std::string_view description;  // one line for `kiln build --listPasses`
  Status (*run)(ir::Graph&, PassContext&);
  PassKind kind = PassKind::kOnnx;
};

// " + "-joined origins, for log messages.
std::string join_origins(std::span<const std::string> names);

}  // namespace kiln::passes
