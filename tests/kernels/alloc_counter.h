#pragma once
// Counts heap allocations (every form of global operator new) made by the current thread while an
// AllocCounter is alive. alloc_counter.cc replaces the global operator new/delete of the test
// binary with versions that forward to malloc/free and bump a thread-local counter only inside such
// a scope, so everything else in the binary allocates as usual.
//
//   AllocCounter counter;
//   kernel->run(inputs, outputs);
//   EXPECT_EQ(counter.count(), 0);

#include <cstdint>

namespace kiln::testing {

class AllocCounter {
 public:
  AllocCounter();
  ~AllocCounter();
  AllocCounter(const AllocCounter&) = delete;
  AllocCounter& operator=(const AllocCounter&) = delete;

  // Allocations on this thread since construction (nested counters all see them).
  int64_t count() const;

 private:
  int64_t start_;
};

}  // namespace kiln::testing
