// The allocation counter the tactic tests rely on: it must see every form of operator new, and only
// inside its scope.
#include "kernels/alloc_counter.h"

#include <gtest/gtest.h>

#include <memory>
#include <new>
#include <string>
#include <vector>

namespace kiln::testing {
namespace {

struct alignas(64) Wide {
  float v[16];
};

// Keeps the compiler from proving an allocation unused and removing it.
template <typename T>
void keep(T* p) {
  asm volatile("" : : "g"(p) : "memory");
}

TEST(AllocCounter, CountsEveryFormOfNew) {
  AllocCounter counter;
  int* a = new int(1);
  keep(a);
  delete a;
  int* b = new int[4];
  keep(b);
  delete[] b;
  Wide* c = new Wide;  // aligned new
  keep(c);
  delete c;
  Wide* d = new Wide[2];
  keep(d);
  delete[] d;
  int* e = new (std::nothrow) int(2);
  keep(e);
  delete e;
  Wide* f = new (std::nothrow) Wide;
  keep(f);
  delete f;
  EXPECT_EQ(counter.count(), 6);
}

TEST(AllocCounter, SeesLibraryAllocations) {
  AllocCounter counter;
  std::vector<float> v(100);
  keep(v.data());
  auto s = std::make_shared<std::string>(64, 'x');
  keep(s.get());
  EXPECT_GE(counter.count(), 2);
}

TEST(AllocCounter, CountsNothingOutsideItsScopeAndNests) {
  std::unique_ptr<int> before(new int(0));
  AllocCounter outer;
  EXPECT_EQ(outer.count(), 0);
  {
    AllocCounter inner;
    std::unique_ptr<int> p(new int(1));
    EXPECT_EQ(inner.count(), 1);
  }
  EXPECT_EQ(outer.count(), 1);
  float x = 0;
  for (int i = 0; i < 100; ++i) x += static_cast<float>(i);
  keep(&x);
  EXPECT_EQ(outer.count(), 1);
}

}  // namespace
}  // namespace kiln::testing
