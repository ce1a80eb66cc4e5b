#include "parallel/thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <thread>

namespace kiln::parallel {

int chunk_count(int64_t n, int64_t grain, int threads) {
  if (n <= 0) return 0;
  const int64_t max_chunks = std::max<int64_t>(1, n / std::max<int64_t>(grain, 1));
  return static_cast<int>(std::min<int64_t>(std::max(threads, 1), max_chunks));
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, const RangeFn& fn) {
  const int chunks = chunk_count(n, grain, threads_);
  if (chunks == 0) return;
  if (chunks == 1) {
    fn(0, n);
    return;
  }
  run_chunks(n, chunks, fn);
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
