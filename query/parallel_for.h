// ParallelFor: runs fn(0) .. fn(n - 1) on up to `threads` threads (the
// caller's included), each index exactly once, and returns when all are
// done. Indexes are handed out one at a time, so uneven items (tracks of
// very different sizes) still balance. fn must be safe to call concurrently
// for different indexes.
#ifndef TRACETABLE_QUERY_PARALLEL_FOR_H_
#define TRACETABLE_QUERY_PARALLEL_FOR_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <thread>
#include <vector>

namespace tracetable {

// Threads worth using for one query on this machine (at most 4: answers are
// merged on one thread, and a server runs several queries at once).
inline int QueryThreads() {
  if (const char* e = std::getenv("TT_QUERY_THREADS")) return std::max(1, std::atoi(e));
  return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
}

template <typename Fn>
void ParallelFor(size_t n, int threads, Fn fn) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) fn(i);
  };
  const size_t extra = std::min<size_t>(n, static_cast<size_t>(std::max(threads, 1))) - (n > 0);
  std::vector<std::thread> helpers;
  helpers.reserve(extra);
  for (size_t t = 0; t < extra; ++t) helpers.emplace_back(work);
  work();
  for (std::thread& h : helpers) h.join();
}

}  // namespace tracetable

#endif  // TRACETABLE_QUERY_PARALLEL_FOR_H_
