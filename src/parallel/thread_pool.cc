#include "parallel/thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <chrono>

namespace kiln::parallel {
namespace {

// How long a worker spins on the generation counter before it sleeps. Layers inside one inference
// follow each other within microseconds; an idle pool between inferences should not burn a core.
constexpr auto kSpinFor = std::chrono::microseconds(200);

}  // namespace

ThreadPool::ThreadPool(int threads) {
  const int workers = std::max(threads, 1) - 1;
  workers_.reserve(workers);
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this, i] { worker_loop(i + 1); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::run_chunk(int index) {
  if (index >= chunks_) return;
  const int64_t begin = n_ * index / chunks_;
  const int64_t end = n_ * (index + 1) / chunks_;
  if (begin < end) (*fn_)(begin, end);
}

void ThreadPool::worker_loop(int index) {
  uint64_t seen = 0;
  for (;;) {
    const auto spin_until = std::chrono::steady_clock::now() + kSpinFor;
    uint64_t gen = generation_.load(std::memory_order_acquire);
    while (gen == seen && std::chrono::steady_clock::now() < spin_until) {
      sched_yield();
      gen = generation_.load(std::memory_order_acquire);
    }
    if (gen == seen) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
      gen = generation_.load(std::memory_order_acquire);
    }
    seen = gen;
    if (stop_.load(std::memory_order_relaxed)) return;
    run_chunk(index);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, const RangeFn& fn) {
  if (n <= 0) return;
  const int64_t max_chunks = std::max<int64_t>(1, n / std::max<int64_t>(grain, 1));
  const int chunks = static_cast<int>(std::min<int64_t>(size(), max_chunks));
  if (chunks <= 1) {
    fn(0, n);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = &fn;
    n_ = n;
    chunks_ = chunks;
    pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  run_chunk(0);
  while (pending_.load(std::memory_order_acquire) != 0) {
    // The workers are running their chunks: wait without taking the core from them.
    sched_yield();
  }
}

int default_thread_count() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

void parallel_for(ThreadPool* pool, int64_t n, int64_t grain, const RangeFn& fn) {
  if (pool == nullptr || pool->size() == 1 || n <= grain) {
    if (n > 0) fn(0, n);
    return;
  }
  pool->parallel_for(n, grain, fn);
}

}  // namespace kiln::parallel
