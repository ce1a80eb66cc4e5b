#include "passes/pipeline.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "ops/infer_graph.h"
#include "passes/attention_fusion.h"
#include "passes/batchnorm_folding.h"
#include "passes/constant_folding.h"
#include "passes/conv_activation_fusion.h"
#include "passes/conv_residual_fusion.h"
#include "passes/conv_tap_pruning.h"
#include "passes/dead_node_elimination.h"
#include "passes/expand_dw_fusion.h"
#include "passes/gemm_activation_fusion.h"
#include "passes/gemm_residual_fusion.h"
#include "passes/gemm_slice_split.h"
#include "passes/gemm_view_hoisting.h"
#include "passes/identity_elimination.h"
#include "passes/matmul_add_fusion.h"
#include "passes/nchw16c_layout.h"
#include "passes/nchw16c_scale_fusion.h"
#include "passes/patch_embedding.h"
#include "passes/qconv_nhwc.h"
#include "passes/qdq_extraction.h"
#include "passes/transpose_reshape_elimination.h"

namespace kiln::passes {
namespace {

// Order matters: cleanup first so that folding sees through Identity/Dropout, folding before
// fusion so that fusions see constants, and DCE last to drop what the others orphaned.
const std::vector<PassDef>& ordered_passes() {
  static const std::vector<PassDef> passes = {
      identity_elimination_pass(),           // cleanup
      constant_folding_pass(),               // folding
      qdq_extraction_pass(),                 // a QDQ model's scales, before weights change
      batchnorm_folding_pass(),              // folding into weights
      conv_tap_pruning_pass(),               // taps that read only padding
      patch_embedding_pass(),                // a ViT's Conv -> Reshape -> Transpose as a GEMM
      transpose_reshape_elimination_pass(),  // data movement
      matmul_add_fusion_pass(),              // fusion
      attention_fusion_pass(),
      conv_residual_fusion_pass(),
      gemm_view_hoisting_pass(),
      gemm_residual_fusion_pass(),
      conv_activation_fusion_pass(),
      gemm_activation_fusion_pass(),
      gemm_slice_split_pass(),
      dead_node_elimination_pass(),  // last
  };
  return passes;
}

const std::vector<PassDef>& ordered_layout_passes() {
  static const std::vector<PassDef> passes = {nchw16c_layout_pass(), nchw16c_scale_fusion_pass(),
                                              expand_dw_fusion_pass(), qconv_nhwc_pass()};
  return passes;
}

Status check_names(const std::vector<std::string>& disabled) {
  std::vector<std::string_view> known;
  for (const PassDef& p : ordered_passes()) known.push_back(p.name);
  for (const PassDef& p : ordered_layout_passes()) known.push_back(p.name);
  for (const std::string& name : disabled) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return invalid_argument("unknown pass '{}' (passes: {})", name, fmt::join(known, ", "));
    }
  }
  return Status::ok();
}

Status run_passes(std::span<const PassDef> passes, ir::Graph& graph, const PipelineOptions& options,
                  PassContext ctx) {
  KILN_RETURN_IF_ERROR(check_names(options.disabled));
  for (const PassDef& pass : passes) {
    if (std::find(options.disabled.begin(), options.disabled.end(), pass.name) !=
        options.disabled.end()) {
      continue;
    }
    KILN_RETURN_IF_ERROR(pass.run(graph, ctx).with_context(fmt::format("pass '{}'", pass.name)));
    if (!options.verify_each) continue;
    Status st = graph.verify();
    if (st) st = ops::infer_graph_shapes(graph);
    if (!st) {
      return internal_error("pass '{}' left an invalid graph: {}", pass.name, st.message());
    }
  }
  return Status::ok();
}

}  // namespace

std::span<const PassDef> pipeline_passes() { return ordered_passes(); }
std::span<const PassDef> layout_passes() { return ordered_layout_passes(); }

Status run_pipeline(ir::Graph& graph, const PipelineOptions& options, PassLog& log,
                    quant::RangeTable* explicit_scales) {
  return run_passes(ordered_passes(), graph, options, PassContext{log, explicit_scales});
}

std::vector<std::string> fusion_pass_names() {
  std::vector<std::string> names;
  for (const PassDef& p : ordered_passes()) {
    if (p.kind == PassKind::kFusion) names.emplace_back(p.name);
  }
  return names;
}

Status run_layout_passes(ir::Graph& graph, const PipelineOptions& options, PassLog& log,
                         BlockedConvCheck runs_blocked) {
  return run_passes(ordered_layout_passes(), graph, options,
                    PassContext{log, nullptr, std::move(runs_blocked)});
}

}  // namespace kiln::passes
