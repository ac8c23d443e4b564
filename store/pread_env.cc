#include "store/pread_env.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace tracetable {
namespace {

class PreadFile : public leveldb::RandomAccessFile {
 public:
  PreadFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~PreadFile() override { ::close(fd_); }

  leveldb::Status Read(uint64_t offset, size_t n, leveldb::Slice* result,
                       char* scratch) const override {
    size_t done = 0;
    while (done < n) {
      const ssize_t r = ::pread(fd_, scratch + done, n - done, static_cast<off_t>(offset + done));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return leveldb::Status::IOError(path_, std::strerror(errno));
      if (r == 0) break;  // end of file: a short read, as LevelDB expects
      done += static_cast<size_t>(r);
    }
    *result = leveldb::Slice(scratch, done);
    return leveldb::Status::OK();
  }

 private:
  std::string path_;
  int fd_;
};

class Env : public leveldb::EnvWrapper {
 public:
  Env() : EnvWrapper(leveldb::Env::Default()) {}
  leveldb::Status NewRandomAccessFile(const std::string& path,
                                      leveldb::RandomAccessFile** result) override {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      *result = nullptr;
      return errno == ENOENT ? leveldb::Status::NotFound(path, std::strerror(errno))
                             : leveldb::Status::IOError(path, std::strerror(errno));
    }
    *result = new PreadFile(path, fd);
    return leveldb::Status::OK();
  }
};

}  // namespace

leveldb::Env* PreadEnv() {
  static Env* env = new Env();
  return env;
}

}  // namespace tracetable
