// RunParts: runs fn(0) .. fn(parts - 1) at once, part 0 on the calling
// thread and each other on a thread of its own named `name`
// (store/thread_name.h), and returns when every part has. For the writers
// that split their output into runs of keys, one per thread (the search and
// flow indexes).
#ifndef TRACETABLE_STORE_RUN_PARTS_H_
#define TRACETABLE_STORE_RUN_PARTS_H_

#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

#include "store/thread_name.h"

namespace tracetable {

inline void RunParts(size_t parts, const char* name, const std::function<void(size_t part)>& fn) {
  std::vector<std::thread> threads;
  for (size_t p = 1; p < parts; ++p) {
    threads.emplace_back([&fn, name, p] {
      NameThisThread(name);
      fn(p);
    });
  }
  if (parts > 0) fn(0);
  for (std::thread& t : threads) t.join();
}

}  // namespace tracetable

#endif  // TRACETABLE_STORE_RUN_PARTS_H_
