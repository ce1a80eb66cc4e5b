#pragma once
// What a benchmark needs before the clock starts: the input tensors and execution contexts with
// every input bound and every shape resolved, so no timed query pays for set-up.

#include <memory>
#include <vector>

#include "base/status.h"
#include "exec/exec_log.h"
#include "inputs.h"
#include "runtime/engine.h"
#include "runtime/execution_context.h"

namespace kiln::cli::exec {

using ContextPtr = std::unique_ptr<runtime::ExecutionContext>;

// Inputs from files or random; inputs without a shape in `flags` take the first profile's opt
// shapes (trtexec's rule), with a warning when the model declares them dynamic.
Result<runtime::NamedTensors> make_feeds(const runtime::Engine& engine, const InputFlags& flags,
                                         ExecLog& log);

// `n` contexts sharing `feeds` (inputs are only read); outputs live in each context's buffers.
Result<std::vector<ContextPtr>> make_contexts(const runtime::Engine& engine,
                                              const runtime::NamedTensors& feeds, int n);

}  // namespace kiln::cli::exec
