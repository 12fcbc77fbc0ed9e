#include "reports/huge_page_allocator.h"

#include <sys/mman.h>

#include <cstdint>

namespace ingero::reports::huge_pages {
namespace {

size_t round_up(size_t bytes) { return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes; }

}  // namespace

void* map(size_t bytes) {
  const size_t length = round_up(bytes);
  // Over-map by one huge page so that a 2 MiB-aligned range of `length` fits;
  // huge pages only back aligned 2 MiB ranges.
  const size_t mapped = length + kHugePageBytes;
  void* raw = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  const size_t head = aligned - start;
  const size_t tail = mapped - head - length;
  if (head > 0) munmap(raw, head);
  if (tail > 0) munmap(reinterpret_cast<void*>(aligned + length), tail);
  auto* pointer = reinterpret_cast<void*>(aligned);
  // Advice only: without transparent huge pages the range stays usable as is.
  (void)madvise(pointer, length, MADV_HUGEPAGE);
  return pointer;
}

void unmap(void* pointer, size_t bytes) { munmap(pointer, round_up(bytes)); }

}  // namespace ingero::reports::huge_pages
