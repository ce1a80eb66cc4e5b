#pragma once
// Reads a TensorRT trtexec log, any version from 7.x to 11.x: the run banner (TensorRT version and
// command line), the device, warm-up and trace counts, and the performance figures, either from
// the `=== Performance summary ===` block (8.0 and later; 8.0-8.3 add an End-to-End Host Latency
// line, 8.0-8.4 print only percentile(99%)) or from 7.x's multi-line Host Latency / Enqueue Time /
// GPU Compute blocks. The exact formats are in docs/report.md. Pure: text in, struct out.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace kiln::cli::report {

// One timing metric as trtexec printed it. A value printed as inf or nan (trtexec prints inf for
// an empty timing vector) is nullopt.
struct TrtexecStats {
  std::optional<double> min, max, mean, median;
  struct Percentile {
    double percentile = 0;
    std::optional<double> ms;
  };
  std::vector<Percentile> percentiles;
};

struct TrtexecLog {
  std::string format;                // "summary" (8.0+) or "legacy" (7.x)
  std::string tensorrt_version;      // "8.6.1", "10.2.0"; "" without a banner
  std::vector<std::string> command;  // the arguments after trtexec; empty without a banner
  std::string started_at;            // the first timestamp, ISO 8601 local time; "" when none
  std::string device;                // "Selected Device: ..."; "" when not printed
  std::optional<int64_t> warmup_queries;
  std::optional<double> warmup_ms;
  std::optional<int64_t> queries;
  std::optional<double> build_s, load_s;  // "Engine built in", "Engine deserialized in"
  std::optional<double> throughput_qps;
  std::optional<TrtexecStats> latency, end_to_end, enqueue, h2d, compute, d2h;
  std::optional<double> host_walltime_s, compute_time_s;
  std::optional<double> compute_cov_percent;  // from the unstable-compute warning
  std::vector<std::string> warnings;          // the summary's [W] lines, continuations joined
  bool failed = false;                        // "&&&& FAILED"
};

// `name` names the log in errors. A log without performance figures is an error that says so.
Result<TrtexecLog> parse_trtexec_log(std::string_view text, std::string_view name);

// NV_TENSORRT_VERSION as the banner prints it ("8601", "100200") as "8.6.1", "10.2.0"; the
// digits as they are when they fit neither scheme.
std::string tensorrt_version_text(std::string_view encoded);

}  // namespace kiln::cli::report
