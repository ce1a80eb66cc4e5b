#include "tuner/cold_cache.h"

#include <algorithm>
#include <atomic>

namespace kiln::tuner {

size_t constant_bytes(const tactics::LayerSpec& spec) {
  size_t bytes = 0;
  for (const Tensor* c : spec.constants) bytes += c != nullptr ? c->nbytes() : 0;
  return bytes;
}

CacheFlusher::CacheFlusher(size_t bytes) : buffer_(bytes / sizeof(uint64_t), 1) {}

void CacheFlusher::flush(parallel::ThreadPool* pool, size_t bytes) {
  // One read per 64-byte line claims it; the sum keeps the reads from being dropped.
  const int64_t lines = static_cast<int64_t>(std::min(bytes, this->bytes()) / 64);
  std::atomic<uint64_t> total{0};
  parallel::parallel_for(pool, lines, 1 << 14, [&](int64_t begin, int64_t end) {
    uint64_t s = 0;
    for (int64_t i = begin; i < end; ++i) s += buffer_[static_cast<size_t>(i) * 8];
    total.fetch_add(s, std::memory_order_relaxed);
  });
  sink_ = sink_ + total.load(std::memory_order_relaxed);
}

void CacheFlusher::touch(parallel::ThreadPool* pool, void* data, size_t bytes) {
  auto* p = static_cast<volatile uint8_t*>(data);
  parallel::parallel_for(pool, static_cast<int64_t>(bytes / 64), 1 << 10,
                         [&](int64_t begin, int64_t end) {
                           for (int64_t i = begin; i < end; ++i) p[i * 64] = p[i * 64];
                         });
}

}  // namespace kiln::tuner
