#include "query/serve/work_pool.h"

#include <utility>

namespace tracetable::serve {

WorkPool::WorkPool(int threads, size_t max_queued) : max_queued_(max_queued) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Loop(); });
}

WorkPool::~WorkPool() { Stop(); }

bool WorkPool::TryPost(std::function<void()> task, Priority priority) {
  return Push(std::move(task), priority, true);
}

bool WorkPool::Post(std::function<void()> task, Priority priority) {
  return Push(std::move(task), priority, false);
}

bool WorkPool::Push(std::function<void()> task, Priority priority, bool capped) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || (capped && queue_.size() >= max_queued_)) return false;
    queue_.emplace(Key(priority.lane, priority.tag, arrivals_++), std::move(task));
  }
  cv_.notify_one();
  return true;
}

void WorkPool::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
    queue_.clear();
  }
  cv_.notify_all();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

PoolLoad WorkPool::load() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {queue_.size(), running_};
}

void WorkPool::Loop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      auto first = queue_.begin();
      task = std::move(first->second);
      queue_.erase(first);
      ++running_;
    }
    task();
    std::lock_guard<std::mutex> lock(mu_);
    --running_;
  }
}

}  // namespace tracetable::serve
