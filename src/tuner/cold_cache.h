#pragma once
// Timing a layer as it runs inside a network. The tuner repeats each candidate on the same buffers,
// so after the first run its weights, input and output sit in the caches, in both cores' copies.
// In the network the layers before have streamed their own weights and activations through since,
// and the layer before has just written this one's input, each thread its part. So before each
// timed run every pool thread reads other memory (Tuner::cold_flush_bytes says how much), which
// takes the weights and the output out of the L2s, and then rewrites its share of the activations
// (CacheFlusher::touch). Graph inputs stay flushed: a benchmark feeds one input over and over,
// which the network's traffic evicts between runs (rewritten on the caller's thread instead,
// MobileNetV2's stem took kiln's kernel on a 0.089 / 0.091 ms tie and ran 0.227 ms in the network
// against oneDNN's 0.142).
//
// First only layers whose weights outgrew a core's L2 were timed cold (MobileNetV2's classifier,
// 5 MB: 0.136 ms warm in oneDNN's GEMM and 0.156 ms in kiln's on 2 threads, 0.42 and 0.21 ms in
// the network). Timed warm, kiln's channels-last INT8 kernel lost ResNet-50's 3x3 layers to
// oneDNN's by 0-6% and ran them 10-14% faster in the network. Every layer timed so (2026-12-07, a
// Zen 5 host, engines A/B in separate processes, 5-6 pairs, against engines tuned warm): INT8
// ResNet-50 0.93x, ViT-Tiny 0.91x, EfficientNet-B0 0.98x, MobileNetV2 0.98x, ResNet-50 1.01x and
// 0.99x (two builds: a build's near-ties fall either way).

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
  // Rewrites [data, data + bytes) in place, split over the pool's threads in contiguous parts, as
  // a layer writes its output: each line then sits modified in the cache of the thread that wrote
  // it. The values do not change.
  void touch(parallel::ThreadPool* pool, void* data, size_t bytes);

 private:
  std::vector<uint64_t> buffer_;
  volatile uint64_t sink_ = 0;
};

}  // namespace kiln::tuner
