#include "store/file_syncer.h"

#include <fcntl.h>
#include <unistd.h>

#include <utility>

#include "store/thread_name.h"

namespace tracetable {
namespace {

bool Sync(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  return synced;
}

}  // namespace

FileSyncer::FileSyncer() : thread_([this] { Loop(); }) {}

FileSyncer::~FileSyncer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void FileSyncer::Add(std::string path) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(path));
  }
  cv_.notify_all();
}

absl::flat_hash_set<std::string> FileSyncer::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return queue_.empty() && !busy_; });
  return synced_;
}

void FileSyncer::Loop() {
  NameThisThread("tt-sync");
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    std::string path = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    const bool synced = Sync(path);
    lock.lock();
    busy_ = false;
    if (synced) synced_.insert(std::move(path));
    cv_.notify_all();
  }
}

}  // namespace tracetable
