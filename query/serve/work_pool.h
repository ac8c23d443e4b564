// A fixed set of worker threads fed from a bounded queue. The HTTP front
// hands a request to a pool only once it has been read whole, so a slow or
// idle client never holds a thread; a full queue is refused (TryPost returns
// false) instead of growing, so the front can answer 503 at once.
//
// Thread-safe. Stop() (also run by the destructor) finishes the running tasks,
// drops the queued ones and joins the threads.
#ifndef TRACETABLE_QUERY_SERVE_WORK_POOL_H_
#define TRACETABLE_QUERY_SERVE_WORK_POOL_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tracetable::serve {

class WorkPool {
 public:
  WorkPool(int threads, size_t max_queued);
  ~WorkPool();
  WorkPool(const WorkPool&) = delete;
  WorkPool& operator=(const WorkPool&) = delete;

  // Queues `task`; false when max_queued tasks already wait or after Stop().
  bool TryPost(std::function<void()> task);
  // Queues `task` past the cap: for the next piece of an answer already
  // accepted (their number is bounded by the answer budget). False after Stop().
  bool Post(std::function<void()> task);
  void Stop();

 private:
  void Loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  size_t max_queued_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace tracetable::serve

#endif  // TRACETABLE_QUERY_SERVE_WORK_POOL_H_
