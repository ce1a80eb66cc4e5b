#include "exec/exec_log.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <ctime>
#include <ostream>

namespace kiln::cli::exec {

std::string log_time_prefix() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  return fmt::format("[{:02}/{:02}/{:04}-{:02}:{:02}:{:02}] ", local.tm_mon + 1, local.tm_mday,
                     local.tm_year + 1900, local.tm_hour, local.tm_min, local.tm_sec);
}

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", utc.tm_year + 1900, utc.tm_mon + 1,
                     utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec);
}

void ExecLog::line(char severity, std::string_view text) {
  if (before_line_) before_line_();
  fmt::print(out_, "{}[{}] {}\n", log_time_prefix(), severity, text);
}

void ExecLog::raw(std::string_view text) {
  if (before_line_) before_line_();
  fmt::print(out_, "{}\n", text);
}

int run_with_banner(ExecLog& log, std::string_view banner, std::ostream& out, std::ostream& err,
                    const std::function<Status()>& body) {
  log.raw(fmt::format("&&&& RUNNING {}", banner));
  const Status status = body();
  if (!status) {
    out.flush();
    fmt::print(err, "kiln: error: {}\n", status.to_string());
    err.flush();
    log.raw(fmt::format("&&&& FAILED {}", banner));
    return 1;
  }
  log.raw(fmt::format("&&&& PASSED {}", banner));
  return 0;
}

}  // namespace kiln::cli::exec
