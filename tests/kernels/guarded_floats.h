#pragma once
// Buffers that end where an unmapped page begins: a kernel that reads or writes one float past
// its buffer crashes the test instead of reading a neighbour's memory unnoticed.

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>

namespace kiln::testing {

// n floats (zeroed) whose last one ends right where a PROT_NONE page starts.
class GuardedFloats {
 public:
  explicit GuardedFloats(size_t n) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t data = (std::max<size_t>(n, 1) * sizeof(float) + page - 1) / page * page;
    bytes_ = data + page;
    base_ = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(base_, MAP_FAILED);
    EXPECT_EQ(mprotect(static_cast<char*>(base_) + data, page, PROT_NONE), 0);
    data_ = reinterpret_cast<float*>(static_cast<char*>(base_) + data) - n;
  }
  ~GuardedFloats() { munmap(base_, bytes_); }
  GuardedFloats(const GuardedFloats&) = delete;
  GuardedFloats& operator=(const GuardedFloats&) = delete;
  float* data() { return data_; }

 private:
  void* base_ = nullptr;
  size_t bytes_ = 0;
  float* data_ = nullptr;
};

}  // namespace kiln::testing
