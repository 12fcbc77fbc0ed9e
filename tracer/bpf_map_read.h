// SPDX-License-Identifier: Apache-2.0
// Reading a BPF hash map from user space: every key, or every (key, value).
#pragma once

#include <bpf/bpf.h>

#include <utility>
#include <vector>

namespace ingero::tracer {

// Visits every key of a BPF hash map.
template <class Key, class Fn>
void for_each_key(int map_fd, Fn&& fn) {
  Key key{};
  Key next{};
  const Key* prev = nullptr;
  while (bpf_map_get_next_key(map_fd, prev, &next) == 0) {
    key = next;
    fn(key);
    prev = &key;
  }
}

// Every (key, value) of a BPF hash map; a key deleted while it is read is left out.
template <class Key, class Value>
std::vector<std::pair<Key, Value>> read_map(int map_fd) {
  std::vector<std::pair<Key, Value>> rows;
  for_each_key<Key>(map_fd, [&](const Key& key) {
    Value value{};
    if (bpf_map_lookup_elem(map_fd, &key, &value) == 0) rows.emplace_back(key, value);
  });
  return rows;
}

}  // namespace ingero::tracer
