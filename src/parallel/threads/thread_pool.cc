// The pool on kiln's own std::thread workers (see parallel/thread_pool.h): a parallel_for bumps a
// generation counter the workers spin on for a short while before sleeping on a condition
// variable, so back-to-back layers pay no futex round trip.
#include "parallel/thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::parallel {
namespace {

// How long a worker spins on the generation counter before it sleeps. Layers inside one inference
// follow each other within microseconds; an idle pool between inferences should not burn a core.
constexpr auto kSpinFor = std::chrono::microseconds(200);

}  // namespace

struct ThreadPool::Workers {
  void loop(int index);
  void run_chunk(int index) const;

  std::vector<std::thread> threads;
  std::mutex mutex;
  std::condition_variable wake;
  std::atomic<uint64_t> generation{0};
  std::atomic<int> pending{0};
  std::atomic<bool> stop{false};
  // The current job; written by the caller before bumping generation.
  const RangeFn* fn = nullptr;
  int64_t n = 0;
  int chunks = 0;
};

void ThreadPool::Workers::run_chunk(int index) const {
  if (index >= chunks) return;
  const int64_t begin = chunk_begin(n, index, chunks);
  const int64_t end = chunk_begin(n, index + 1, chunks);
  if (begin < end) (*fn)(begin, end);
}

void ThreadPool::Workers::loop(int index) {
  uint64_t seen = 0;
  for (;;) {
    const auto spin_until = std::chrono::steady_clock::now() + kSpinFor;
    uint64_t gen = generation.load(std::memory_order_acquire);
    while (gen == seen && std::chrono::steady_clock::now() < spin_until) {
      sched_yield();
      gen = generation.load(std::memory_order_acquire);
    }
    if (gen == seen) {
      std::unique_lock<std::mutex> lock(mutex);
      wake.wait(lock, [&] { return generation.load(std::memory_order_acquire) != seen; });
      gen = generation.load(std::memory_order_acquire);
    }
    seen = gen;
    if (stop.load(std::memory_order_relaxed)) return;
    run_chunk(index);
    pending.fetch_sub(1, std::memory_order_acq_rel);
  }
}

ThreadPool::ThreadPool(int threads)
    : threads_(std::max(threads, 1)), workers_(std::make_unique<Workers>()) {
  workers_->threads.reserve(static_cast<size_t>(threads_ - 1));
  for (int i = 1; i < threads_; ++i) {
    workers_->threads.emplace_back([w = workers_.get(), i] { w->loop(i); });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(workers_->mutex);
    workers_->stop.store(true, std::memory_order_relaxed);
    workers_->generation.fetch_add(1, std::memory_order_release);
  }
  workers_->wake.notify_all();
  for (std::thread& t : workers_->threads) t.join();
}

std::string_view ThreadPool::backend() { return "threads"; }

void ThreadPool::run_chunks(int64_t n, int chunks, const RangeFn& fn) {
  Workers& w = *workers_;
  {
    std::lock_guard<std::mutex> lock(w.mutex);
    w.fn = &fn;
    w.n = n;
    w.chunks = chunks;
    w.pending.store(static_cast<int>(w.threads.size()), std::memory_order_relaxed);
    w.generation.fetch_add(1, std::memory_order_release);
  }
  w.wake.notify_all();
  w.run_chunk(0);
  while (w.pending.load(std::memory_order_acquire) != 0) {
    // The workers are running their chunks: wait without taking the core from them.
    sched_yield();
  }
}

// kiln's workers already take a job at a spinning thread's cost.
void ThreadPool::run_segment_impl(const RangeFn& body) { body(0, 1); }

}  // namespace kiln::parallel
