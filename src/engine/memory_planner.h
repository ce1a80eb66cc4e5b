#pragma once
// Activation memory planning: every intermediate tensor of an engine lives in one arena, and
// tensors whose lifetimes do not overlap may share bytes.
//
// The engine builder describes each tensor by its size and its lifetime in layer steps; the
// planner assigns each one an offset in the arena. Finding the smallest arena is NP-hard (it is
// dynamic storage allocation), so plan_memory runs a few well-known greedy heuristics and keeps
// the one with the smallest arena. Each is O(n^2) in the number of tensors, so an engine can
// re-plan cheaply when input shapes change. See docs/memory_planning.md.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace kiln::engine {

// One tensor: `bytes` of storage live during layer steps [first_step, last_step] (inclusive). A
// tensor written by step i and last read by step j has lifetime [i, j]; two tensors overlap when
// their step ranges share a step, so a layer's inputs never alias its outputs.
//
// Preconditions (asserted; the builder computes these): bytes >= 0, first_step <= last_step, and
// the sum of all sizes rounded up to the alignment fits in int64_t. plan_memory stays well-defined
// without the first two: a negative size plans as 0 bytes and reversed steps as [last, first].
struct BufferRequest {
  int64_t bytes = 0;
  int first_step = 0;
  int last_step = 0;
};

struct MemoryPlan {
  std::vector<int64_t> offsets;  // one per request, each a multiple of the alignment
  int64_t arena_bytes = 0;       // max over requests of offset + aligned size (0 if none)
  int64_t no_reuse_bytes = 0;    // sum of aligned sizes: what a plan without reuse needs
  int64_t peak_live_bytes = 0;   // max over steps of the aligned sizes live then: a lower bound
  std::string strategy;          // the heuristic whose plan this is ("greedy_by_size", ...)
};

// Plans offsets for `requests` (in the same order). `alignment` must be positive (64 = a cache
// line and the widest vector register). Zero-byte tensors get offset 0 and occupy nothing.
// Guarantees: tensors whose lifetimes overlap get disjoint byte ranges; every offset is aligned;
// peak_live_bytes <= arena_bytes <= no_reuse_bytes. Deterministic: the same requests always give
// the same plan.
MemoryPlan plan_memory(std::span<const BufferRequest> requests, int64_t alignment = 64);

// Checks a plan against its requests: the requests meet the preconditions, one offset per
// request, every offset non-negative and aligned, every pair of overlapping lifetimes on disjoint
// byte ranges, and arena_bytes / no_reuse_bytes / peak_live_bytes equal to what the offsets and
// sizes give (peak recomputed by brute force). Returns a message naming the first offending
// request, or pair of requests by index, or "" when the plan is valid. O(n^2): for tests, and
// plan_memory asserts it in debug builds.
std::string validate_memory_plan(std::span<const BufferRequest> requests, const MemoryPlan& plan,
                                 int64_t alignment = 64);

// "arena 12.3 MiB (no reuse 98.1 MiB, peak live 12.0 MiB, +2.5%)": sizes in B, KiB, MiB, GiB or
// TiB, and how far the arena is above the peak-live lower bound.
std::string describe_memory_plan(const MemoryPlan& plan);

}  // namespace kiln::engine
