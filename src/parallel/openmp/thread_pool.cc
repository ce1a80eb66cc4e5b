// The pool on libgomp's threads (see parallel/thread_pool.h): a parallel_for is one OpenMP
// parallel region, or, inside a segment (run_segment: one region for many parallel_fors), a job
// posted to the team's other threads spinning in it. libgomp keeps each calling thread's team
// between regions and reuses it, so no thread is created per inference; its workers spin for
// GOMP_SPINCOUNT polls after a region, then sleep on a futex.
#include "parallel/thread_pool.h"

#include <immintrin.h>
#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <exception>

namespace kiln::parallel {
namespace {

// Polls a segment's thread spins before it yields the core on every further poll (a pool with
// more threads than cores must not starve the thread it waits for).
constexpr int kSpinPolls = 1 << 14;

void pause_or_yield(int& polls) {
  if (++polls < kSpinPolls) {
    _mm_pause();
  } else {
    sched_yield();
  }
}

}  // namespace

// A segment's job slot (run_segment): the caller posts a job by bumping `generation`; the team's
// other threads spin on it, run their chunk and count `pending` down.
struct ThreadPool::Workers {
  void serve(int index, uint64_t seen);
  void post(const RangeFn* job, int64_t items, int job_chunks);

  std::atomic<uint64_t> generation{0};
  std::atomic<int> pending{0};
  const RangeFn* fn = nullptr;  // null: the segment ends
  int64_t n = 0;
  int chunks = 0;
  int team = 1;
  bool in_segment = false;  // read and written by the calling thread only
};

// `seen`: the generation before the segment's region began (read then, so that no job posted
// before this thread gets here is missed).
void ThreadPool::Workers::serve(int index, uint64_t seen) {
  for (;;) {
    int polls = 0;
    uint64_t gen;
    while ((gen = generation.load(std::memory_order_acquire)) == seen) pause_or_yield(polls);
    seen = gen;
    if (fn == nullptr) return;
    if (index < chunks) {
      const int64_t begin = chunk_begin(n, index, chunks), end = chunk_begin(n, index + 1, chunks);
      if (begin < end) (*fn)(begin, end);
    }
    pending.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::Workers::post(const RangeFn* job, int64_t items, int job_chunks) {
  fn = job;
  n = items;
  chunks = job_chunks;
  pending.store(team - 1, std::memory_order_relaxed);
  generation.fetch_add(1, std::memory_order_release);
}

ThreadPool::ThreadPool(int threads)
    : threads_(std::max(threads, 1)), workers_(std::make_unique<Workers>()) {
  // Starts the calling thread's team now rather than in the first inference. A context built on
  // one thread and run on another gets its team at that thread's first region instead.
  if (threads_ > 1) {
#pragma omp parallel num_threads(threads_)
    {}
  }
}

ThreadPool::~ThreadPool() = default;

std::string_view ThreadPool::backend() { return "openmp"; }

void ThreadPool::run_chunks(int64_t n, int chunks, const RangeFn& fn) {
  Workers& w = *workers_;
  if (w.in_segment) {
    const int used = std::min(chunks, w.team);
    w.post(&fn, n, used);
    const int64_t end = chunk_begin(n, 1, used);
    if (end > 0) fn(0, end);
    int polls = 0;
    while (w.pending.load(std::memory_order_acquire) != 0) pause_or_yield(polls);
    return;
  }
#pragma omp parallel num_threads(chunks)
  {
    // libgomp may give fewer threads than asked (a region nested in the caller's own): split
    // over the team it gave.
    const int64_t team = omp_get_num_threads();
    const int64_t index = omp_get_thread_num();
    const int64_t begin = chunk_begin(n, index, team);
    const int64_t end = chunk_begin(n, index + 1, team);
    if (begin < end) fn(begin, end);
  }
}

void ThreadPool::run_segment_impl(const RangeFn& body) {
  Workers& w = *workers_;
  if (threads_ == 1 || w.in_segment || omp_in_parallel() != 0) {
    body(0, 1);
    return;
  }
  const uint64_t start = w.generation.load(std::memory_order_relaxed);
  // An exception may not leave an OpenMP region (std::terminate): the body's is carried out of it
  // and rethrown to the caller, as it would have reached it without the segment.
  std::exception_ptr thrown;
#pragma omp parallel num_threads(threads_)
  {
    if (omp_get_thread_num() == 0) {
      w.team = omp_get_num_threads();
      w.in_segment = true;
      try {
        body(0, 1);
      } catch (...) {
        thrown = std::current_exception();
      }
      w.in_segment = false;
      w.post(nullptr, 0, 0);
    } else {
      w.serve(omp_get_thread_num(), start);
    }
  }
  if (thrown) std::rethrow_exception(thrown);
}

}  // namespace kiln::parallel
