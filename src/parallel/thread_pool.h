#pragma once
// A fixed pool of threads for splitting one layer's work, created once per execution context (or
// once per process) and never per inference. The calling thread takes part in the work, so a pool
// of size N runs N-way with N-1 other threads.
//
// Two backends, one per build (CMake's KILN_THREAD_POOL):
// - openmp (the default, parallel/openmp/): the pool's threads are libgomp's, the same threads
//   oneDNN's layers run on. One set of threads for the whole network: a worker that spins after a
//   kiln layer is the one the next oneDNN layer needs, and the reverse; two pools spinning after
//   each other's layers took each other's cores (docs/performance.md, 2026-11-27 evening).
//   Dispatch spins briefly, then sleeps: libgomp's wait, set by parallel/openmp_wait.h.
// - threads (parallel/threads/): kiln's own std::thread workers, spinning on a generation counter
//   for 200 us before sleeping on a condition variable. The ThreadSanitizer build uses it:
//   Debian's libgomp is not instrumented, so ThreadSanitizer cannot see its synchronization.

#include <cstdint>
#include <memory>
#include <string_view>
#include <type_traits>

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
  // threads >= 1 counts the caller.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return threads_; }

  // Splits [0, n) into at most size() contiguous chunks of at least `grain` items and runs them,
  // one per thread, returning when all are done. Not reentrant: fn must not call back into the
  // pool; one parallel_for at a time per pool (an execution context is used by one thread).
  void parallel_for(int64_t n, int64_t grain, const RangeFn& fn);

  // Runs body() on the calling thread, with the pool's parallel_fors inside it dispatched at a
  // spinning thread's cost. The openmp backend opens one OpenMP region for the whole body, its
  // other threads spinning on a job slot between the body's parallel_fors, instead of one region
  // per parallel_for (libgomp's fork and join cost 3-6 us a region on the 2-vCPU hosts, ~0.3 ms an
  // INT8 ResNet-50 inference). Nothing in body may start OpenMP regions of its own (oneDNN's
  // primitives): they would nest and run on one thread. Not reentrant, like parallel_for.
  template <typename F>
  void run_segment(F&& body) {
    run_segment_impl([&](int64_t, int64_t) { body(); });
  }

  // The build's backend: "openmp" or "threads".
  static std::string_view backend();

 private:
  // The backend's part of parallel_for: runs chunks >= 2 chunks of [0, n), one per thread.
  void run_chunks(int64_t n, int chunks, const RangeFn& fn);
  // The backend's part of run_segment: body(0, 1).
  void run_segment_impl(const RangeFn& body);

  struct Workers;  // the backend's state
  int threads_;
  std::unique_ptr<Workers> workers_;
};

// How many chunks parallel_for splits n items into on `threads` threads: at most one per thread,
// each of at least `grain` items; 1 when the work does not split.
int chunk_count(int64_t n, int64_t grain, int threads);

// Chunk `index` of `chunks` over [0, n): contiguous, sizes differing by at most one.
inline int64_t chunk_begin(int64_t n, int64_t index, int64_t chunks) { return n * index / chunks; }

// The number of threads a pool should have by default: the cores this process may run on.
int default_thread_count();
// The threads a caller asked for, 0 meaning default_thread_count().
inline int thread_count(int requested) {
  return requested == 0 ? default_thread_count() : requested;
}

// Runs fn over [0, n) on `pool`, or on the calling thread when pool is null, has one thread, or
// n is at most `grain`.
void parallel_for(ThreadPool* pool, int64_t n, int64_t grain, const RangeFn& fn);

}  // namespace kiln::parallel
