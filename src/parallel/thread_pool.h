#pragma once
// A fixed pool of worker threads for splitting one layer's work, created once per execution
// context (or once per process) and never per inference.
//
// Dispatch is built for latency: a parallel_for wakes the workers by bumping a generation counter
// they spin on for a short while before sleeping on a condition variable, so back-to-back layers
// (the common case inside one inference) pay no futex round trip. The calling thread takes part in
// the work, so a pool of size N runs N-way with N-1 workers.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace kiln::parallel {

// fn(begin, end) handles the items [begin, end). A non-owning reference to a callable, so that
// passing a lambda never allocates (std::function would, for captures beyond its small buffer):
// parallel_for runs on the hot path and returns before the callable goes out of scope.
class RangeFn {
 public:
  template <typename F>
  requires(!std::is_same_v<std::decay_t<F>, RangeFn>)
      RangeFn(F&& f)  // NOLINT(google-explicit-constructor): a lambda converts implicitly
      : object_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, int64_t b, int64_t e) {
          (*static_cast<std::remove_reference_t<F>*>(o))(b, e);
        }) {}
  void operator()(int64_t begin, int64_t end) const { call_(object_, begin, end); }

 private:
  void* object_;
  void (*call_)(void*, int64_t, int64_t);
};

class ThreadPool {
 public:
  // threads >= 1 counts the caller; threads - 1 workers are started.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Splits [0, n) into at most size() contiguous chunks of at least `grain` items and runs them,
  // one per thread, returning when all are done. Not reentrant: fn must not call back into the
  // pool; one parallel_for at a time per pool (an execution context is used by one thread).
  void parallel_for(int64_t n, int64_t grain, const RangeFn& fn);

 private:
  void worker_loop(int index);
  void run_chunk(int index);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
  // The current job; written by the caller before bumping generation_.
  const RangeFn* fn_ = nullptr;
  int64_t n_ = 0;
  int chunks_ = 0;
};

// The number of threads a pool should have by default: the cores this process may run on.
int default_thread_count();

// Runs fn over [0, n) on `pool`, or on the calling thread when pool is null, has one thread, or
// n is at most `grain`.
void parallel_for(ThreadPool* pool, int64_t n, int64_t grain, const RangeFn& fn);

}  // namespace kiln::parallel
