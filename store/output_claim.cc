#include "store/output_claim.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tracetable {
namespace fs = std::filesystem;
namespace {

constexpr char kLockName[] = "LOCK";

// True if someone holds the lock in `spill_dir` (its ingest runs).
bool LockHeld(const std::string& spill_dir) {
  const int fd = ::open((fs::path(spill_dir) / kLockName).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // also drops the lock if we got it
  return held;
}

bool PidAlive(int pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

}  // namespace

std::vector<Leftover> FindLeftovers(const std::string& out) {
  std::vector<Leftover> found;
  const fs::path o = fs::absolute(out);
  const std::string prefix = o.filename().string() + ".tmp-";
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(o.parent_path(), ec)) {
    std::string name = e.path().filename().string();
    if (!name.starts_with(prefix)) continue;
    std::string rest = name.substr(prefix.size());
    const bool spill = rest.ends_with("-spill");
    if (spill) rest.resize(rest.size() - 6);
    int pid = 0;
    if (!absl::SimpleAtoi(rest, &pid) || pid <= 0) continue;
    const std::string spill_dir = spill ? e.path().string() : e.path().string() + "-spill";
    found.push_back({e.path().string(), pid, LockHeld(spill_dir)});
  }
  return found;
}

absl::StatusOr<std::unique_ptr<OutputClaim>> OutputClaim::Acquire(const std::string& out,
                                                                  std::vector<std::string>* removed) {
  std::unique_ptr<OutputClaim> c(new OutputClaim());
  const int me = static_cast<int>(::getpid());
  c->spill_dir_ = absl::StrCat(out, ".tmp-", me, "-spill");
  std::error_code ec;
  fs::remove_all(c->spill_dir_, ec);  // ours: a previous process with our pid died
  if (!fs::create_directory(c->spill_dir_, ec)) {
    return absl::InternalError(absl::StrCat("cannot create ", c->spill_dir_, ": ", ec.message()));
  }
  const std::string lock = (fs::path(c->spill_dir_) / kLockName).string();
  c->fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (c->fd_ < 0 || ::flock(c->fd_, LOCK_EX | LOCK_NB) != 0) {
    return absl::InternalError(absl::StrCat("cannot lock ", lock, ": ", std::strerror(errno)));
  }
  for (const Leftover& l : FindLeftovers(out)) {
    if (l.pid == me) continue;
    if (l.writing) {
      return absl::FailedPreconditionError(absl::StrCat(
          out, " is being written by another ingest (pid ", l.pid, "); wait for it or stop it"));
    }
    if (PidAlive(l.pid)) continue;
    fs::remove_all(l.path, ec);
    if (!ec && removed) removed->push_back(l.path);
  }
  return c;
}

OutputClaim::~OutputClaim() {
  std::error_code ec;
  // Removed while still locked, so no one sees a folder without its lock.
  fs::remove_all(spill_dir_, ec);
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace tracetable
