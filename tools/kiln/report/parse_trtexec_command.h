#pragma once
// kiln parse-trtexec log.txt -o summary.json: a TensorRT trtexec log (7.x to 11.x) as kiln's
// benchmark summary JSON, the input `kiln report` reads next to kiln's own runs.

#include <optional>
#include <ostream>
#include <string>

#include "base/status.h"

namespace kiln::cli::report {

struct ParseTrtexecOptions {
  std::string log;
  std::string output;
  std::string model;      // when the log's command line names no model file
  std::string precision;  // when the log has no command line
  std::optional<int64_t> batch;
};

Status parse_trtexec_command(const ParseTrtexecOptions& options, std::ostream& out);

}  // namespace kiln::cli::report
