#pragma once
// Keeps the tuner's times to the host at full speed. A shared host changes speed under a build
// every fraction of a second: the 2-vCPU build host of 2026-12-06 ran MobileNetV2 at 3.6-3.9,
// 4.4-4.7 or 7.4-7.9 ms per inference in stretches of about 0.4 s (one process, one engine), the
// slowest as fast as with both threads pinned to one vCPU. Every candidate timed in a slow stretch
// takes up to twice as long, and the ranking it gives is that of a smaller machine: ResNet-50
// builds timed up to 17 of their 54 timed layers so (every candidate 1.7-2.5x) and chose kiln's
// 1x1 kernels (1.00 ms, all candidates alike) where oneDNN's ran 15% faster in the network at full
// speed. Across 6 builds each, the sum of the layers' best times spread 31.0-37.1 ms with a
// latency-bound probe (one dependent chain a thread, which re-timed 3 rounds in all) and
// 31.3-32.5 ms with this one.
//
// The guard runs a probe on the tuner's threads after each round of timed runs
// (time_interleaved's round_ok): a round after which the probe ran more than kSlack times its
// best time is timed again, once the probe runs at full speed (waiting up to kWaitMs), up to
// kRoundTries tries; a round kept though the host ran slow marks its layer's times. The probe
// learns its best time as the build goes, so the builder times again the layers timed before the
// best was seen (Tuner::timed_slow, in engine/builder.cc).

#include <functional>

#include "parallel/thread_pool.h"

namespace kiln::tuner {

class HostSpeedGuard {
 public:
  // The probe's work on every thread of `pool`, timed. Tests pass `time_probe_us` in its place.
  explicit HostSpeedGuard(parallel::ThreadPool* pool,
                          std::function<double()> time_probe_us = nullptr);

  // For time_interleaved: whether the round just timed counts (attempt counts its tries from 0).
  // Sets `slow` when a round is kept though the host ran slow, and raises `probe_us` to the
  // probe's time after a kept round.
  bool round_ok(int attempt, bool& slow, double& probe_us);
  // True when a layer whose rounds left the probe at `probe_us` was timed slower than kSlack
  // times the best time known now.
  bool timed_slow(double probe_us) const { return probe_us > kSlack * best_us_; }

  int rounds_retimed() const { return rounds_retimed_; }
  int rounds_slow() const { return rounds_slow_; }
  double best_us() const { return best_us_; }

  static constexpr double kSlack = 1.15;
  static constexpr int kPrimeRuns = 20;
  static constexpr int kRoundTries = 4;
  // After this many slow rounds kept in a row, rounds are kept without waiting until the probe
  // runs at full speed again: a host that stays slow (more threads than cores) costs no waits.
  static constexpr int kPatientRounds = 5;
  static constexpr double kWaitMs = 20;
  // Waits stop for the rest of the build once they add up to this: a host busy on and off for
  // the whole build (a test suite on every core) must not lengthen it much.
  static constexpr double kWaitBudgetMs = 1000;

 private:
  // The better of two probe runs (the first may wake sleeping workers); lowers the best time.
  double probe();
  bool full_speed(double us) const { return us <= kSlack * best_us_; }
  // Sleeps 1 ms at a time (the scheduler may move a thread off a shared core) and probes until
  // the host runs at full speed or kWaitMs have passed; true if it does. Sets last_us_.
  bool wait_for_full_speed();

  std::function<double()> time_probe_us_;
  double best_us_ = 0;
  double last_us_ = 0;
  int rounds_retimed_ = 0;
  int rounds_slow_ = 0;
  int slow_in_a_row_ = 0;
  double waited_ms_ = 0;
};

// The probe's work for one thread: 32 independent multiply-add chains (some tens of us), bound
// by the core's floating-point throughput, which two threads on one core split between them, and
// not by memory, which other processes' traffic slows. Returns a value of every step.
double probe_work(double seed);

}  // namespace kiln::tuner
