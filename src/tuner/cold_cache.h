#pragma once
// Timing a layer as it runs inside a network. The tuner repeats each candidate on the same buffers,
// so after the first run its weights sit in the caches; in the network they do not when they are
// larger than a core's L2: the layers before have streamed their own weights and activations
// through since. A layer whose weights are that large is timed cold: before each timed run every
// pool thread reads other memory, which takes the weights out of the L2s (Tuner::cold_flush_bytes
// says how much). MobileNetV2's classifier (5 MB of weights) took 0.136 ms warm in oneDNN's GEMM
// and 0.156 ms in kiln's on 2 threads, and ran 0.42 and 0.21 ms in the network.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/cache_sizes.h"
#include "parallel/thread_pool.h"
#include "tactics/tactic.h"

namespace kiln::tuner {

// The bytes of a layer's constant inputs (its weights as the model holds them).
size_t constant_bytes(const tactics::LayerSpec& spec);

class CacheFlusher {
 public:
  explicit CacheFlusher(size_t bytes);
  size_t bytes() const { return buffer_.size() * sizeof(uint64_t); }
  // Reads the first `bytes` (at most bytes()), split over the pool's threads.
  void flush(parallel::ThreadPool* pool, size_t bytes);

 private:
  std::vector<uint64_t> buffer_;
  volatile uint64_t sink_ = 0;
};

}  // namespace kiln::tuner
