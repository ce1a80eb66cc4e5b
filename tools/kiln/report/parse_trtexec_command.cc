#include "report/parse_trtexec_command.h"

#include <fmt/ostream.h>

#include "exec/exports.h"
#include "io/file_util.h"
#include "report/trtexec_log.h"
#include "report/trtexec_summary.h"

namespace kiln::cli::report {

Status parse_trtexec_command(const ParseTrtexecOptions& o, std::ostream& out) {
  KILN_ASSIGN_OR_RETURN(std::string text, io::read_file(o.log));
  KILN_ASSIGN_OR_RETURN(TrtexecLog log, parse_trtexec_log(text, o.log));
  const TrtexecImportOptions import{o.log, o.model, o.precision, o.batch};
  KILN_ASSIGN_OR_RETURN(nlohmann::ordered_json summary, trtexec_summary_json(log, import));
  KILN_RETURN_IF_ERROR(exec::write_json(o.output, summary));
  const auto& results = summary["results"];
  const auto& median = results["latency_ms"]["median"];
  fmt::print(out, "{}: TensorRT {} ({} format), {} qps, median latency {} -> {}\n", o.log,
             log.tensorrt_version.empty() ? "version unknown" : log.tensorrt_version,
             log.format == "legacy" ? "7.x" : "8+", results["throughput_qps"].dump(),
             median.is_null() ? "not recorded" : median.dump() + " ms", o.output);
  return Status::ok();
}

}  // namespace kiln::cli::report
