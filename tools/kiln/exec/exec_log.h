#pragma once
// trtexec's log lines: "[MM/DD/YYYY-HH:MM:SS] [I] text" (local time; severities I, W, E, V), so
// that log parsers written for trtexec read kiln's output. The "&&&&" banner lines have no prefix.

#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

#include "base/status.h"

namespace kiln::cli::exec {

class ExecLog {
 public:
  ExecLog(std::ostream& out, bool verbose) : out_(out), verbose_(verbose) {}

  void info(std::string_view text) { line('I', text); }
  void warn(std::string_view text) { line('W', text); }
  void error(std::string_view text) { line('E', text); }
  // Printed only with --verbose.
  void verbose(std::string_view text) {
    if (verbose_) line('V', text);
  }
  void raw(std::string_view text);
  void line(char severity, std::string_view text);
  bool is_verbose() const { return verbose_; }
  // Called before every line, e.g. to erase a progress bar drawn on the same terminal.
  void set_before_line(std::function<void()> f) { before_line_ = std::move(f); }

 private:
  std::ostream& out_;
  bool verbose_;
  std::function<void()> before_line_;
};

// Runs `body` between trtexec's banner lines: "&&&& RUNNING <banner>", then PASSED, or FAILED after
// printing the error to `err`. Returns the process exit code (0 or 1).
int run_with_banner(ExecLog& log, std::string_view banner, std::ostream& out, std::ostream& err,
                    const std::function<Status()>& body);

// "[04/05/2026-13:07:42] " for the current local time.
std::string log_time_prefix();

// "2026-04-05T11:07:42Z": the current UTC time, ISO 8601.
std::string utc_timestamp();

}  // namespace kiln::cli::exec
