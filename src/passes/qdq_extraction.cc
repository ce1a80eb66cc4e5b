#include "passes/qdq_extraction.h"

#include <fmt/format.h>

#include "quant/qdq_extract.h"

namespace kiln::passes {
namespace qdq_extraction {
namespace {

constexpr std::string_view kName = "qdq_extraction";

Status run(ir::Graph& graph, PassContext& ctx) {
  if (!ctx.explicit_scales || !quant::has_qdq(graph)) return Status::ok();
  std::vector<std::string> lines;
  KILN_ASSIGN_OR_RETURN(const quant::QdqSummary s,
                        quant::extract_qdq(graph, *ctx.explicit_scales, lines));
  for (std::string& line : lines) ctx.log.add(kName, std::move(line));
  ctx.log.add(kName, fmt::format("explicit quantization: {} Q/DQ pairs on activations and {} "
                                 "quantized constants taken in; {} Q/DQ nodes left as they are",
                                 s.activation_pairs, s.constants, s.left));
  return Status::ok();
}

}  // namespace
}  // namespace qdq_extraction

const PassDef& qdq_extraction_pass() {
  static const PassDef def{
      qdq_extraction::kName,
      "QuantizeLinear -> DequantizeLinear pairs and quantized constants -> the model's INT8 scales",
      qdq_extraction::run};
  return def;
}

}  // namespace kiln::passes
