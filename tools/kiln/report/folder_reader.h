#pragma once
// Everything kiln report reads from a results folder, recursively: benchmark summaries (kiln's
// runs, sweeps, imported trtexec logs, bench/peers' per-engine summaries), sweep indexes (which
// say where each run's engine is), per-layer profiles exported next to the summaries, and the
// engine files themselves (their size; for kiln engines the activation arena they plan).

#include <filesystem>
#include <string>
#include <vector>

#include "base/status.h"
#include "report/run_data.h"

namespace kiln::cli::report {

struct ReportInputs {
  std::vector<Run> runs;           // in path order
  std::vector<std::string> notes;  // one line each: files skipped and why, engines not read
  size_t files = 0;                // regular files seen
};

// Files that are not summaries, indexes or profiles are skipped with a note. Errors: the folder
// missing or empty, no summary in it, a malformed summary, index or profile (naming the file and
// the field), an index naming a summary that does not exist.
Result<ReportInputs> read_report_folder(const std::filesystem::path& dir);

}  // namespace kiln::cli::report
