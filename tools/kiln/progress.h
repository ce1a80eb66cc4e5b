#pragma once
// Progress of long work (building: per layer tuned; calibrating: per batch; sweeping: per run),
// written to stderr so that stdout stays parseable.
//
// On a terminal: one line redrawn with '\r' — bar, done/total, percent, elapsed time and ETA —
// at most every 0.1 s, ended with a newline when the work is done. Elsewhere (CI logs, files):
// a plain line at most every 5 s, and one at the end. The ETA assumes the remaining steps take
// as long as the average step so far. The clock and the terminal flag are injected so that tests
// check the formatting and the throttling without sleeping.

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

namespace kiln::cli {

// Where progress goes: `out` null shows none; `terminal` selects the redrawn bar.
struct ProgressTarget {
  std::ostream* out = nullptr;
  bool terminal = false;
};

// std::cerr, as a bar when stderr is a terminal.
ProgressTarget stderr_progress();

class Progress {
 public:
  using Clock = std::function<double()>;  // monotonic seconds

  // `total` 0 shows nothing (there is nothing to wait for).
  Progress(ProgressTarget target, std::string label, size_t total, Clock clock = steady_seconds);
  // Ends a bar left unfinished (an error stopped the work) so that the next line starts clean.
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `done` steps of `total` are finished; `detail` names the current one (a layer, a batch).
  void update(size_t done, std::string_view detail = {});
  // For work whose size is known only once it starts (a build learns its layer count late).
  void set_total(size_t total) { total_ = out_ ? total : 0; }
  // Erases a drawn bar (before other output to the same terminal); the next update redraws it.
  void clear();

  // The text of one report (without '\r' or '\n'), for a terminal or a log.
  std::string line(size_t done, double elapsed_s, std::string_view detail) const;

  static double steady_seconds();
  // isatty(stderr): the flag the commands pass for progress on std::cerr.
  static bool stderr_is_terminal();
  // "0.4s", "12.3s", "4m05s", "1h02m".
  static std::string format_duration(double seconds);

  static constexpr double kTerminalPeriodS = 0.1;
  static constexpr double kLogPeriodS = 5.0;

 private:
  std::ostream* out_;
  std::string label_;
  size_t total_;
  bool terminal_;
  bool drawn_ = false;  // a bar is on the terminal line
  Clock clock_;
  double start_;
  double last_shown_;
  size_t last_width_ = 0;  // of the terminal line, to blank what a shorter one leaves
  bool finished_ = false;
};

}  // namespace kiln::cli
