#include "common/fma_peak.h"

#include <chrono>
#include <thread>
#include <vector>

#include "base/cpu_features.h"

namespace kiln::bench {

double fma_chains_avx512(int64_t rounds);
double fma_chains_avx2(int64_t rounds);
int64_t vnni_chains_avx512(int64_t rounds);
int64_t amx_chains(int64_t rounds);

namespace {

volatile double g_sink = 0;  // keeps the chains' results alive

// The sum of `threads` threads running fn(iterations) at once.
template <typename Fn>
double sum_over_threads(int threads, int64_t iterations, Fn fn) {
  std::vector<double> rates(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] { rates[static_cast<size_t>(t)] = fn(iterations); });
  }
  for (std::thread& th : pool) th.join();
  double sum = 0;
  for (double r : rates) sum += r;
  return sum;
}

// Giga-operations per second of `chains(rounds)`, each round `ops_per_round` operations, over
// about `iterations` x 64 / ops_per_round rounds.
template <typename Chains>
double chains_rate(int64_t iterations, int64_t ops_per_round, Chains chains) {
  const int64_t rounds = iterations / ops_per_round * 64;
  const auto t0 = std::chrono::steady_clock::now();
  g_sink = g_sink + static_cast<double>(chains(rounds));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return static_cast<double>(rounds * ops_per_round) / s * 1e-9;
}

}  // namespace

double fma_peak_gflops_one_thread(int64_t iterations) {
  const CpuFeatureSet f = host_cpu_features();
  const bool avx512 = (f & kIsaAvx512) == kIsaAvx512;
  const bool avx2 = (f & kIsaAvx2) == kIsaAvx2;
  if (!avx512 && !avx2) return 0;
  return chains_rate(iterations, avx512 ? 24 * 16 * 2 : 12 * 8 * 2, [&](int64_t rounds) {
    return avx512 ? fma_chains_avx512(rounds) : fma_chains_avx2(rounds);
  });
}

double fma_peak_gflops(int threads, int64_t iterations) {
  return sum_over_threads(threads, iterations, fma_peak_gflops_one_thread);
}

double vnni_peak_gops_one_thread(int64_t iterations) {
  if ((host_cpu_features() & kIsaAvx512Vnni) != kIsaAvx512Vnni) return 0;
  return chains_rate(iterations, 24 * 16 * 4 * 2, vnni_chains_avx512);  // see vnni_peak_avx512.cc
}

double vnni_peak_gops(int threads, int64_t iterations) {
  return sum_over_threads(threads, iterations, vnni_peak_gops_one_thread);
}

double amx_peak_gops_one_thread(int64_t iterations) {
  if ((host_cpu_features() & kIsaAmxInt8) != kIsaAmxInt8) return 0;
  return chains_rate(iterations, 4 * 16 * 16 * 64 * 2, amx_chains);  // see amx_peak.cc
}

double amx_peak_gops(int threads, int64_t iterations) {
  return sum_over_threads(threads, iterations, amx_peak_gops_one_thread);
}

}  // namespace kiln::bench
