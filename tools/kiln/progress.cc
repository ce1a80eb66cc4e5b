#include "progress.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <ostream>

namespace kiln::cli {

ProgressTarget stderr_progress() { return {&std::cerr, Progress::stderr_is_terminal()}; }

Progress::Progress(ProgressTarget target, std::string label, size_t total, Clock clock)
    : out_(target.out),
      label_(std::move(label)),
      total_(target.out ? total : 0),
      terminal_(target.terminal),
      clock_(std::move(clock)),
      start_(clock_()),
      // A log gets its first line after a period, so that short work prints only the last one.
      last_shown_(target.terminal ? -1e300 : start_) {}

Progress::~Progress() {
  if (drawn_) {
    fmt::print(*out_, "\n");
    out_->flush();
  }
}

void Progress::clear() {
  if (!drawn_) return;
  fmt::print(*out_, "\r{}\r", std::string(last_width_, ' '));
  out_->flush();
  drawn_ = false;
  last_width_ = 0;
  last_shown_ = -1e300;
}

double Progress::steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool Progress::stderr_is_terminal() { return isatty(STDERR_FILENO) != 0; }

std::string Progress::format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "--";
  if (s < 60) return fmt::format("{:.1f}s", s);
  const auto whole = static_cast<long long>(std::llround(s));
  if (whole < 3600) return fmt::format("{}m{:02}s", whole / 60, whole % 60);
  return fmt::format("{}h{:02}m", whole / 3600, whole / 60 % 60);
}

std::string Progress::line(size_t done, double elapsed, std::string_view detail) const {
  const double fraction = total_ ? static_cast<double>(std::min(done, total_)) / total_ : 1.0;
  const std::string eta =
      done == 0 ? "--" : format_duration(elapsed / done * static_cast<double>(total_ - done));
  std::string text;
  if (terminal_) {
    constexpr int kWidth = 24;
    const int filled = static_cast<int>(kWidth * fraction);
    text = fmt::format("[{}] [{}{}] ", label_, std::string(filled, '#'),
                       std::string(kWidth - filled, '.'));
  } else {
    text = fmt::format("[{}] ", label_);
  }
  text += fmt::format("{}/{} ({:.0f}%), elapsed {}", done, total_, 100 * fraction,
                      format_duration(elapsed));
  if (done < total_) text += ", ETA " + eta;
  if (!detail.empty()) {
    // A terminal line must fit one row to be redrawn in place: long layer names are cut.
    constexpr size_t kDetail = 40;
    const bool cut = terminal_ && detail.size() > kDetail;
    text += ' ';
    text.append(cut ? detail.substr(0, kDetail - 3) : detail);
    if (cut) text += "...";
  }
  return text;
}

void Progress::update(size_t done, std::string_view detail) {
  if (total_ == 0 || finished_) return;
  const double now = clock_();
  const bool last = done >= total_;
  const double period = terminal_ ? kTerminalPeriodS : kLogPeriodS;
  if (!last && now - last_shown_ < period) return;
  last_shown_ = now;
  std::string text = line(done, now - start_, detail);
  if (terminal_) {
    const size_t width = text.size();
    if (width < last_width_) text += std::string(last_width_ - width, ' ');
    last_width_ = width;
    fmt::print(*out_, "\r{}{}", text, last ? "\n" : "");
    drawn_ = !last;
  } else {
    fmt::print(*out_, "{}\n", text);
  }
  out_->flush();
  finished_ = last;
}

}  // namespace kiln::cli
