#include "store/file_syncer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "store/thread_name.h"

namespace tracetable {

absl::Status SyncFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::InternalError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced) return absl::InternalError(absl::StrCat("cannot sync ", path));
  return absl::OkStatus();
}

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
    const bool synced = SyncFile(path).ok();
    lock.lock();
    busy_ = false;
    if (synced) synced_.insert(std::move(path));
    cv_.notify_all();
  }
}

}  // namespace tracetable
