#pragma once
// A parsed trtexec log as kiln's benchmark summary (schema kiln.exec.summary, the one `kiln exec
// --exportSummary` writes; docs/exec.md), so that `kiln report` reads TensorRT's runs and kiln's
// alike. What the log does not record is null; the model, precision and batch come from the
// log's command line when it has them, else from the options.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/status.h"
#include "report/trtexec_log.h"

namespace kiln::cli::report {

struct TrtexecImportOptions {
  std::string log_path;          // recorded as source.log
  std::string model;             // model.name when the command line names no model file
  std::string precision;         // build.precision when the log has no command line
  std::optional<int64_t> batch;  // model.batch when neither --batch nor --shapes gives it
};

Result<nlohmann::ordered_json> trtexec_summary_json(const TrtexecLog& log,
                                                    const TrtexecImportOptions& options);

}  // namespace kiln::cli::report
