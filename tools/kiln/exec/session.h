#pragma once
// What a benchmark needs before the clock starts: the input tensors and execution contexts with
// every input bound and every shape resolved, so no timed query pays for set-up.

#include <memory>
#include <vector>

#include "base/status.h"
#include "engine/builder.h"
#include "exec/exec_log.h"
#include "exec/exports.h"
#include "inputs.h"
#include "runtime/engine.h"
#include "runtime/execution_context.h"

namespace kiln::cli::exec {

using ContextPtr = std::unique_ptr<runtime::ExecutionContext>;
using EnginePtr = std::shared_ptr<const runtime::Engine>;

// Optimizes `graph` into an engine ready to run; the build log's warnings are logged as [W], the
// rest as [V].
Result<EnginePtr> build_engine_from(ir::Graph graph, const engine::BuildOptions& options,
                                    ExecLog& log);

// Inputs from files or random; inputs without a shape in `flags` take the first profile's opt
// shapes (trtexec's rule), with a warning when the model declares them dynamic.
Result<runtime::NamedTensors> make_feeds(const runtime::Engine& engine, const InputFlags& flags,
                                         ExecLog& log);

// Build options carrying the tuning flags: optimization level, budget, tactic sources, timing
// cache, and the threads the engine will run with (layers are timed as they will run).
engine::BuildOptions tuning_build_options(const ExecOptions& o);

// The precision flags (--int8, --best, --calib, --layerPrecisions, --precisionConstraints) applied
// to `b`; warnings go to the log.
Status apply_exec_precision(const ExecOptions& o, engine::BuildOptions& b, ExecLog& log);

// `n` contexts of `threads` threads each, sharing `feeds` (inputs are only read); outputs live in
// each context's buffers.
Result<std::vector<ContextPtr>> make_contexts(const runtime::Engine& engine,
                                              const runtime::NamedTensors& feeds, int n,
                                              int threads);

// The run's input and output names, dtypes and dims (from a prepared context) into `rec`.
void record_io(const runtime::Engine& engine, runtime::ExecutionContext& ctx, RunRecord& rec);

}  // namespace kiln::cli::exec
