#pragma once
// `kiln exec`: trtexec on a CPU. Builds an engine from ONNX (or loads one), benchmarks it with
// trtexec's warm-up, iteration and duration policy on one or more concurrent execution contexts,
// and prints trtexec's report; the JSON exports are trtexec's plus kiln's --exportSummary.
// docs/exec.md is the user's guide.

#include <iosfwd>
#include <span>
#include <string>

#include "base/status.h"
#include "exec/exec_log.h"
#include "exec/exec_options.h"

namespace kiln::cli::exec {

// The whole command: parses `args` (what follows "exec"), prints the banner, the report and the
// final "&&&& PASSED/FAILED" line to `out` and errors to `err`. Returns the exit code.
int exec_main(std::span<const std::string> args, std::ostream& out, std::ostream& err);

// Runs validated options, reporting through `log`.
Status exec_command(const ExecOptions& options, ExecLog& log);

}  // namespace kiln::cli::exec
