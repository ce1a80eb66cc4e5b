#include "kernels/alloc_counter.h"

#include <cstdlib>
#include <new>

namespace {

// Plain thread_local integers: no constructor runs on first use, so operator new may touch them
// at any point of a thread's life.
thread_local int64_t t_allocations = 0;
thread_local int t_active = 0;

void note_allocation() {
  if (t_active > 0) ++t_allocations;
}

void* allocate(std::size_t size) {
  note_allocation();
  if (size == 0) size = 1;
  while (true) {
    if (void* p = std::malloc(size)) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

void* allocate_aligned(std::size_t size, std::align_val_t align) {
  note_allocation();
  if (size == 0) size = 1;
  std::size_t a = static_cast<std::size_t>(align);
  if (a < sizeof(void*)) a = sizeof(void*);
  while (true) {
    void* p = nullptr;
    if (posix_memalign(&p, a, size) == 0) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

template <typename Fn>
void* no_throw(Fn&& fn) noexcept {
  try {
    return fn();
  } catch (...) {
    return nullptr;
  }
}

}  // namespace

namespace kiln::testing {

AllocCounter::AllocCounter() : start_(t_allocations) { ++t_active; }
AllocCounter::~AllocCounter() { --t_active; }
int64_t AllocCounter::count() const { return t_allocations - start_; }

}  // namespace kiln::testing

// --- the replaced global allocation functions ---------------------------------------------------

void* operator new(std::size_t size) { return allocate(size); }
void* operator new[](std::size_t size) { return allocate(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return no_throw([&] { return allocate(size); });
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return no_throw([&] { return allocate(size); });
}
void* operator new(std::size_t size, std::align_val_t align) {
  return allocate_aligned(size, align);
}
void* operator new[](std::size_t size, std::align_val_t align) {
  return allocate_aligned(size, align);
}
void* operator new(std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return no_throw([&] { return allocate_aligned(size, align); });
}
void* operator new[](std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return no_throw([&] { return allocate_aligned(size, align); });
}

void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
