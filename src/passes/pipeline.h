#pragma once
// The one place that orders kiln's graph passes.

#include <span>
#include <string>
#include <vector>

#include "passes/pass.h"

namespace kiln::passes {

struct PipelineOptions {
  // Pass names to skip; an unknown name is an error listing the valid ones.
  std::vector<std::string> disabled;
  // Re-verify the graph and re-run shape inference after every pass, naming the pass that broke
  // it. On by default: it costs milliseconds and turns a pass bug into a clear error.
  bool verify_each = true;
};

// Every pass run_pipeline runs, in order.
std::span<const PassDef> pipeline_passes();

// The names of pipeline_passes() of kind PassKind::kFusion: disabled, the pipeline leaves standard
// ONNX ops only.
std::vector<std::string> fusion_pass_names();

// The layout passes, run by the builder after precision lowering (engine/precision.h), when the
// graph shows which layers stay float32; in order.
std::span<const PassDef> layout_passes();

// Runs the enabled passes in order over a graph that has passed import and shape inference.
// `explicit_scales` receives a QDQ model's scales (see qdq_extraction.h); without it Q/DQ stay.
Status run_pipeline(ir::Graph& graph, const PipelineOptions& options, PassLog& log,
                    quant::RangeTable* explicit_scales = nullptr);

// Runs the enabled layout passes in order (options.disabled may name passes of either list);
// `runs_blocked` as in PassContext.
Status run_layout_passes(ir::Graph& graph, const PipelineOptions& options, PassLog& log,
                         BlockedConvCheck runs_blocked = nullptr);

}  // namespace kiln::passes
