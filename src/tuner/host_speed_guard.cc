#include "tuner/host_speed_guard.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <thread>

namespace kiln::tuner {
namespace {

using Clock = std::chrono::steady_clock;

double micros_since(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}

// Keeps the probe's results alive, so that the compiler cannot drop the work.
std::atomic<double> g_sink{0};

double time_probe_on(parallel::ThreadPool* pool) {
  const int threads = pool == nullptr ? 1 : pool->size();
  const Clock::time_point t0 = Clock::now();
  parallel::parallel_for(pool, threads, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      g_sink.store(probe_work(static_cast<double>(i)), std::memory_order_relaxed);
    }
  });
  return micros_since(t0);
}

}  // namespace

double probe_work(double seed) {
  constexpr int kSteps = 8192;
  std::array<double, 32> a;
  for (size_t j = 0; j < a.size(); ++j) a[j] = seed + static_cast<double>(j);
  for (int i = 0; i < kSteps; ++i) {
    for (double& v : a) v = v * 0.999999 + 1e-7;
  }
  double sum = 0;
  for (double v : a) sum += v;
  return sum;
}

HostSpeedGuard::HostSpeedGuard(parallel::ThreadPool* pool, std::function<double()> time_probe_us)
    : time_probe_us_(time_probe_us ? std::move(time_probe_us)
                                   : [pool] { return time_probe_on(pool); }) {
  best_us_ = time_probe_us_();
  for (int i = 1; i < kPrimeRuns; ++i) best_us_ = std::min(best_us_, time_probe_us_());
}

double HostSpeedGuard::probe() {
  const double first = time_probe_us_();
  last_us_ = std::min(first, time_probe_us_());
  best_us_ = std::min(best_us_, last_us_);
  return last_us_;
}

bool HostSpeedGuard::wait_for_full_speed() {
  const Clock::time_point start = Clock::now();
  bool fast = false;
  while (!(fast = full_speed(probe())) && micros_since(start) < kWaitMs * 1e3) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  waited_ms_ += micros_since(start) / 1e3;
  return fast;
}

bool HostSpeedGuard::round_ok(int attempt, bool& slow, double& probe_us) {
  if (full_speed(probe())) {
    slow_in_a_row_ = 0;
    probe_us = std::max(probe_us, last_us_);
    return true;
  }
  if (slow_in_a_row_ < kPatientRounds && attempt + 1 < kRoundTries && waited_ms_ < kWaitBudgetMs &&
      wait_for_full_speed()) {
    ++rounds_retimed_;
    return false;
  }
  slow = true;
  ++rounds_slow_;
  ++slow_in_a_row_;
  probe_us = std::max(probe_us, last_us_);
  return true;
}

}  // namespace kiln::tuner
