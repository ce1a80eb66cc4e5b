// The pool on libgomp's threads (see parallel/thread_pool.h): a parallel_for is one OpenMP
// parallel region. libgomp keeps each calling thread's team between regions and reuses it, so no
// thread is created per inference; its workers spin for GOMP_SPINCOUNT polls after a region, then
// sleep on a futex.
#include "parallel/thread_pool.h"

#include <omp.h>

#include <algorithm>

namespace kiln::parallel {

struct ThreadPool::Workers {};

ThreadPool::ThreadPool(int threads) : threads_(std::max(threads, 1)) {
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

}  // namespace kiln::parallel
