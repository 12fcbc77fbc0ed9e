// One op's events in table order, kept as the consecutive chunks that the
// parallel scan produced: joining them into one buffer would copy (and fault in)
// every event once more. Read it front to back like a container.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

#include "reports/huge_page_allocator.h"

namespace ingero::reports {

struct Event {
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
  int64_t tid = 0;
  int64_t end_ns() const { return ts_ns + dur_ns; }
};

using EventList = LargeVector<Event>;

class EventColumn {
 public:
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Event;
    using difference_type = std::ptrdiff_t;
    using pointer = const Event*;
    using reference = const Event&;

    const_iterator() = default;
    reference operator*() const { return *event_; }
    pointer operator->() const { return event_; }
    const_iterator& operator++() {
      if (++event_ == (*chunks_)[chunk_].data() + (*chunks_)[chunk_].size()) {
        ++chunk_;
        settle();
      }
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator before = *this;
      ++*this;
      return before;
    }
    bool operator==(const const_iterator& other) const {
      return chunk_ == other.chunk_ && event_ == other.event_;
    }
    bool operator!=(const const_iterator& other) const { return !(*this == other); }

   private:
    friend class EventColumn;
    const_iterator(const std::vector<EventList>* chunks, size_t chunk) : chunks_(chunks), chunk_(chunk) {
      settle();
    }
    // Points at the first event of the first non-empty chunk from chunk_ on,
    // or becomes end() (chunk_ == chunk count, no event).
    void settle() {
      while (chunk_ < chunks_->size() && (*chunks_)[chunk_].empty()) ++chunk_;
      event_ = chunk_ < chunks_->size() ? (*chunks_)[chunk_].data() : nullptr;
    }

    const std::vector<EventList>* chunks_ = nullptr;
    size_t chunk_ = 0;
    const Event* event_ = nullptr;
  };

  // Appends the events that follow the ones already held, taking over the buffer.
  void append(EventList chunk) {
    size_ += chunk.size();
    chunks_.push_back(std::move(chunk));
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const_iterator begin() const { return const_iterator(&chunks_, 0); }
  const_iterator end() const { return const_iterator(&chunks_, chunks_.size()); }
  const std::vector<EventList>& chunks() const { return chunks_; }

 private:
  std::vector<EventList> chunks_;
  size_t size_ = 0;
};

}  // namespace ingero::reports
