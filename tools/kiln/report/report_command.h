#pragma once
// kiln report <dir> -o report.html [--format=html|md] [--title=...]: tables and charts from a
// folder of benchmark summaries (kiln exec/sweep, imported trtexec logs, bench/peers), written
// atomically as one self-contained HTML file or as markdown with its charts as SVG files next to
// it. docs/report.md is the spec.

#include <ostream>
#include <string>

#include "base/status.h"

namespace kiln::cli::report {

struct ReportOptions {
  std::string folder;
  std::string output;
  std::string format;  // "html" or "md"; "" = from the output's extension (.md), else html
  std::string title = "kiln benchmark report";
};

// Notes (files skipped, charts left out) and a closing line go to `out`.
Status report_command(const ReportOptions& options, std::ostream& out);

}  // namespace kiln::cli::report
