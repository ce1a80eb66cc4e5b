// The tuner's guard against a slow host (tuner/host_speed_guard.h), driven by scripted probe
// times, and time_interleaved's re-timed rounds.
#include "tuner/host_speed_guard.h"

#include <gtest/gtest.h>

#include <deque>

#include "tuner/tuner.h"

namespace kiln::tuner {
namespace host_speed_guard_test {

// Probe times in us, served in order; the last repeats once the script runs out.
class Script {
 public:
  explicit Script(std::deque<double> times) : times_(std::move(times)) {}
  double next() {
    const double t = times_.front();
    if (times_.size() > 1) times_.pop_front();
    return t;
  }
  void then(std::deque<double> times) { times_ = std::move(times); }

 private:
  std::deque<double> times_;
};

// Primed with 20 runs at 100 us: a round after which the probe runs within 1.15x counts, and the
// probe's time is kept for the layer.
TEST(HostSpeedGuard, ARoundAtFullSpeedCounts) {
  Script s({100});
  HostSpeedGuard g(nullptr, [&] { return s.next(); });
  EXPECT_EQ(g.best_us(), 100);
  s.then({110});
  bool slow = false;
  double probe_us = 0;
  EXPECT_TRUE(g.round_ok(0, slow, probe_us));
  EXPECT_FALSE(slow);
  EXPECT_EQ(probe_us, 110);
  EXPECT_EQ(g.rounds_retimed(), 0);
}

// A slow probe after a round (both of its runs at 2x) rejects the round once the host is back to
// full speed; the round timed again then counts.
TEST(HostSpeedGuard, ARoundTheHostRanSlowIsTimedAgainOnceItRunsAtFullSpeed) {
  Script s({100});
  HostSpeedGuard g(nullptr, [&] { return s.next(); });
  s.then({200, 200, 100});
  bool slow = false;
  double probe_us = 0;
  EXPECT_FALSE(g.round_ok(0, slow, probe_us));
  EXPECT_EQ(g.rounds_retimed(), 1);
  EXPECT_TRUE(g.round_ok(1, slow, probe_us));
  EXPECT_FALSE(slow);
  EXPECT_EQ(probe_us, 100);
}

// A host that stays slow: the round is kept after the wait (marked slow, not timed again), and
// after kPatientRounds such rounds the guard no longer waits (no time lost per round).
TEST(HostSpeedGuard, AHostThatStaysSlowKeepsItsRoundsMarkedAndStopsTheWaits) {
  Script s({100});
  HostSpeedGuard g(nullptr, [&] { return s.next(); });
  s.then({300});
  int probes = 0;
  bool slow = false;
  double probe_us = 0;
  for (int r = 0; r < HostSpeedGuard::kPatientRounds; ++r) {
    EXPECT_TRUE(g.round_ok(0, slow, probe_us));
  }
  EXPECT_TRUE(slow);
  EXPECT_EQ(probe_us, 300);
  EXPECT_EQ(g.rounds_slow(), HostSpeedGuard::kPatientRounds);
  EXPECT_EQ(g.rounds_retimed(), 0);
  Script counted({300});
  HostSpeedGuard h(nullptr, [&] {
    ++probes;
    return probes <= HostSpeedGuard::kPrimeRuns ? 100.0 : counted.next();
  });
  for (int r = 0; r < HostSpeedGuard::kPatientRounds; ++r) (void)h.round_ok(0, slow, probe_us);
  const int before = probes;
  EXPECT_TRUE(h.round_ok(0, slow, probe_us));
  EXPECT_EQ(probes - before, 2);  // one probe (two runs), no waiting
}

// The last allowed try is kept even when the host runs slow.
TEST(HostSpeedGuard, TheLastTryOfARoundIsKept) {
  Script s({100});
  HostSpeedGuard g(nullptr, [&] { return s.next(); });
  s.then({200});
  bool slow = false;
  double probe_us = 0;
  EXPECT_TRUE(g.round_ok(HostSpeedGuard::kRoundTries - 1, slow, probe_us));
  EXPECT_TRUE(slow);
}

// The best time is learnt as the build goes: a layer timed while the probe took 200 us counts as
// timed slow once the probe has run at 100 us, not before.
TEST(HostSpeedGuard, LayersTimedBeforeTheBestWasSeenAreTimedSlow) {
  Script s({200});
  HostSpeedGuard g(nullptr, [&] { return s.next(); });
  bool slow = false;
  double probe_us = 0;
  EXPECT_TRUE(g.round_ok(0, slow, probe_us));
  EXPECT_FALSE(g.timed_slow(probe_us));
  s.then({100});
  double later = 0;
  EXPECT_TRUE(g.round_ok(0, slow, later));
  EXPECT_EQ(g.best_us(), 100);
  EXPECT_TRUE(g.timed_slow(probe_us));
  EXPECT_FALSE(g.timed_slow(later));
}

// time_interleaved drops the times of a round round_ok rejects and runs it again.
TEST(HostSpeedGuard, ARejectedRoundIsRunAgainAndItsTimesDropped) {
  int run = 0;
  const auto run_once = [&](size_t i) -> Result<double> {
    ++run;
    return run <= 2 ? 50.0 : 1.0 + static_cast<double>(i);
  };
  std::vector<int> attempts;
  const auto round_ok = [&](int attempt) {
    attempts.push_back(attempt);
    return run > 2;
  };
  const auto samples = time_interleaved(
      2, {.repeats = 2}, run_once, [] { return false; }, round_ok);
  EXPECT_EQ(attempts, (std::vector<int>{0, 1, 0}));
  EXPECT_EQ(run, 6);
  EXPECT_EQ(samples[0].ms, (std::vector<double>{1.0, 1.0}));
  EXPECT_EQ(samples[1].ms, (std::vector<double>{2.0, 2.0}));
}

// The probe's work depends on its seed (the compiler cannot fold it to a constant).
TEST(HostSpeedGuard, ProbeWorkDependsOnItsSeed) { EXPECT_NE(probe_work(1.0), probe_work(2.0)); }

}  // namespace host_speed_guard_test
}  // namespace kiln::tuner
