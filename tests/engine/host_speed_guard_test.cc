// The tuner's guard against a slow host (tuner/host_speed_guard.h), driven by scripted probe
// times, and time_interleaved's re-timed rounds.
#include "tuner/host_speed_guard.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <string>

#include "engine/builder.h"
#include "engine/engine_test_util.h"
#include "testing/onnx_builder.h"
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

// The tuner's side of the builder's re-timing: a layer timed while the probe ran at 2x the best
// time seen later reports timed_slow; timed again (Retime::kYes) at full speed, it no longer does.
TEST(HostSpeedGuard, TheTunerFlagsALayerTimedBeforeTheBestAndTimesItAgain) {
  auto plan = engine::build_plan(testing::import_model(testing::small_cnn(false)),
                                 {.optimization_level = 0});
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  auto classifier = testing::small_cnn_classifier(*plan);
  ASSERT_TRUE(classifier.is_ok()) << classifier.status().to_string();
  const TuningLayer& fc = *classifier;
  Script s({200});
  Tuner t({.threads = 2, .host_probe_us = [&] { return s.next(); }});
  auto first = t.choose(fc);
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  EXPECT_EQ(first->probe_us, 200);
  EXPECT_FALSE(t.timed_slow(*first));  // 200 us is the best the guard has seen yet
  s.then({100});
  auto second = t.choose(fc);
  ASSERT_TRUE(second.is_ok());
  EXPECT_EQ(second->probe_us, 100);
  EXPECT_TRUE(t.timed_slow(*first));
  EXPECT_FALSE(t.timed_slow(*second));
  const int measured = t.times_measured();
  auto again = t.choose(fc, Retime::kYes);
  ASSERT_TRUE(again.is_ok());
  EXPECT_GT(t.times_measured(), measured);
  EXPECT_FALSE(t.timed_slow(*again));
}

// The builder times again the layers timed before the host ran at full speed: the probe runs at
// 2x until the first layer is chosen, then at 1x; the build log counts the layer.
TEST(HostSpeedGuard, TheBuilderTimesAgainTheLayersTimedBeforeTheHostRanAtFullSpeed) {
  Script s({200});
  engine::BuildOptions o;
  o.threads = 2;
  o.host_probe_us = [&] { return s.next(); };
  o.progress = [&](size_t done, size_t, std::string_view) {
    if (done == 1) s.then({100});
  };
  auto plan = engine::build_plan(testing::import_model(testing::small_cnn(false)), o);
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  const auto tuning = std::find_if(plan->build_log.begin(), plan->build_log.end(),
                                   [](const std::string& l) { return l.starts_with("tuning:"); });
  ASSERT_NE(tuning, plan->build_log.end());
  EXPECT_NE(tuning->find("; 1 layer timed again, timed before the host ran at full speed"),
            std::string::npos)
      << *tuning;
}

// The probe's work depends on its seed (the compiler cannot fold it to a constant).
TEST(HostSpeedGuard, ProbeWorkDependsOnItsSeed) { EXPECT_NE(probe_work(1.0), probe_work(2.0)); }

}  // namespace host_speed_guard_test
}  // namespace kiln::tuner
