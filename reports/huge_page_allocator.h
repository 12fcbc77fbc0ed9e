// An allocator for the large per-run buffers (events, thread timelines, durations).
// A 10-million-event run fills hundreds of MB of fresh memory; touched 4 KiB at a
// time that is ~100k page faults, which dominate the analysis on virtual machines.
// Buffers of kHugePageBytes or more are mapped 2 MiB-aligned and offered to
// transparent huge pages (MADV_HUGEPAGE), cutting the faults ~500-fold; where the
// kernel declines, they behave as ordinary anonymous memory. Smaller buffers use
// operator new.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace ingero::reports {

namespace huge_pages {
inline constexpr size_t kHugePageBytes = size_t{2} << 20;
void* map(size_t bytes);              // throws std::bad_alloc
void unmap(void* pointer, size_t bytes);
}  // namespace huge_pages

template <class T>
class HugePageAllocator {
 public:
  using value_type = T;

  HugePageAllocator() noexcept = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}

  T* allocate(size_t count) {
    const size_t bytes = count * sizeof(T);
    if (bytes < huge_pages::kHugePageBytes) return static_cast<T*>(::operator new(bytes));
    return static_cast<T*>(huge_pages::map(bytes));
  }
  // The size decides the path, and it is the same here as in allocate().
  void deallocate(T* pointer, size_t count) noexcept {
    const size_t bytes = count * sizeof(T);
    if (bytes < huge_pages::kHugePageBytes) {
      ::operator delete(pointer);
    } else {
      huge_pages::unmap(pointer, bytes);
    }
  }

  template <class U>
  bool operator==(const HugePageAllocator<U>&) const noexcept { return true; }
  template <class U>
  bool operator!=(const HugePageAllocator<U>&) const noexcept { return false; }
};

template <class T>
using LargeVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace ingero::reports
