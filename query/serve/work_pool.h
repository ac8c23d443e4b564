// A fixed set of worker threads fed from a bounded queue that runs the most
// urgent task first. The HTTP front hands a request to a pool only once it
// has been read whole, so a slow or idle client never holds a thread; a full
// queue is refused (TryPost returns false) instead of growing, so the front
// can answer 503 at once.
//
// Order: lower lane first (the front puts cheap calls in lane 0, so they
// never wait behind costly ones already queued), then lower tag (fair_clock.h:
// connections served less lately first), then arrival.
//
// Thread-safe. Stop() (also run by the destructor) finishes the running tasks,
// drops the queued ones and joins the threads.
#ifndef TRACETABLE_QUERY_SERVE_WORK_POOL_H_
#define TRACETABLE_QUERY_SERVE_WORK_POOL_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

namespace tracetable::serve {

struct Priority {
  int lane = 0;
  int64_t tag = 0;
};

struct PoolLoad {
  size_t queued = 0;   // tasks waiting for a thread
  size_t running = 0;  // tasks a thread is running
};

class WorkPool {
 public:
  WorkPool(int threads, size_t max_queued);
  ~WorkPool();
  WorkPool(const WorkPool&) = delete;
  WorkPool& operator=(const WorkPool&) = delete;

  // Queues `task`; false when max_queued tasks already wait or after Stop().
  bool TryPost(std::function<void()> task, Priority priority = {});
  // Queues `task` past the cap: for the next piece of an answer already
  // accepted (their number is bounded by the answer budget). False after Stop().
  bool Post(std::function<void()> task, Priority priority = {});
  void Stop();
  // A snapshot, for monitoring and for tests that must know a task is queued.
  PoolLoad load() const;

 private:
  using Key = std::tuple<int, int64_t, uint64_t>;  // lane, tag, arrival
  bool Push(std::function<void()> task, Priority priority, bool capped);
  void Loop();

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<Key, std::function<void()>> queue_;
  uint64_t arrivals_ = 0;
  size_t running_ = 0;
  size_t max_queued_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace tracetable::serve

#endif  // TRACETABLE_QUERY_SERVE_WORK_POOL_H_
