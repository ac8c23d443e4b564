#include "ingest/chrome_json/byte_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "store/thread_name.h"

namespace tracetable::chrome_json {
namespace {

constexpr size_t kRawChunk = 1 << 20;  // compressed bytes per read
// Inflated bytes per chunk handed from the inflating thread, and how many
// may wait.
constexpr size_t kInflatedChunk = size_t{4} << 20;
constexpr size_t kInflatedAhead = 2;

absl::Status PathError(const std::string& path, int err, bool not_found) {
  std::string msg = absl::StrCat(path, ": cannot read: ", std::strerror(err));
  return not_found ? absl::NotFoundError(msg) : absl::InvalidArgumentError(msg);
}

}  // namespace

absl::StatusOr<std::unique_ptr<ByteSource>> ByteSource::Open(
    const std::string& path, Progress progress) {
  std::unique_ptr<ByteSource> src(new ByteSource());
  src->errors_.path = path;
  src->progress_ = std::move(progress);
  src->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (src->fd_ < 0) return PathError(path, errno, errno == ENOENT);
  struct stat st;
  if (::fstat(src->fd_, &st) != 0) return PathError(path, errno, false);
  if (S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": byte 0: expected a Chrome trace JSON file, got a directory"));
  }
  src->file_size_ = S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_size) : 0;
  ::posix_fadvise(src->fd_, 0, 0, POSIX_FADV_SEQUENTIAL);

  // Peek the first chunk to detect gzip by its magic bytes.
  src->in_.resize(kRawChunk);
  absl::StatusOr<bool> got = src->ReadRaw();
  if (!got.ok()) return got.status();
  if (src->in_len_ >= 2 && static_cast<unsigned char>(src->in_[0]) == 0x1f &&
      static_cast<unsigned char>(src->in_[1]) == 0x8b) {
    src->gzip_ = true;
    src->errors_.gzip = true;
    if (absl::Status s = src->InitGzip(); !s.ok()) return s;
    src->inflater_ = std::thread([p = src.get()] { p->Inflate(); });
  }
  return src;
}

ByteSource::~ByteSource() {
  if (inflater_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      changed_.notify_all();
    }
    inflater_.join();
  }
  if (zs_init_) inflateEnd(&zs_);
  if (fd_ >= 0) ::close(fd_);
}

absl::Status ByteSource::InitGzip() {
  // 16 + MAX_WBITS: gzip wrapper only; we already know it is gzip.
  if (inflateInit2(&zs_, 16 + MAX_WBITS) != Z_OK) {
    return absl::InternalError(absl::StrCat(errors_.path, ": inflateInit2 failed"));
  }
  zs_init_ = true;
  return absl::OkStatus();
}

absl::StatusOr<bool> ByteSource::ReadRaw() {
  in_pos_ = 0;
  in_len_ = 0;
  if (file_eof_) return false;
  while (true) {
    ssize_t n = ::read(fd_, in_.data(), in_.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return errno == EISDIR
                 ? errors_.Error(0, "a Chrome trace JSON file", "a directory")
                 : PathError(errors_.path, errno, false);
    }
    if (n == 0) {
      file_eof_ = true;
      return false;
    }
    in_len_ = static_cast<size_t>(n);
    file_done_ += in_len_;
    if (progress_) progress_(file_done_, std::max(file_size_, file_done_));
    return true;
  }
}

void ByteSource::Inflate() {
  NameThisThread("tt-inflate");
  while (true) {
    Inflated chunk;
    {
      std::unique_lock<std::mutex> lock(mu_);
      changed_.wait(lock, [&] { return ready_.size() < kInflatedAhead || stop_; });
      if (stop_) return;
      if (!spare_.empty()) {
        chunk.bytes = std::move(spare_.back());
        spare_.pop_back();
      }
    }
    chunk.bytes.resize(kInflatedChunk);
    // Fill the chunk: ReadGzip stops after each zlib call that produced.
    absl::Status status;
    while (chunk.len < chunk.bytes.size()) {
      absl::StatusOr<size_t> got = ReadGzip(chunk.bytes.data() + chunk.len, chunk.bytes.size() - chunk.len);
      if (!got.ok()) {
        status = got.status();
        break;
      }
      if (*got == 0) break;
      chunk.len += *got;
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (chunk.len > 0) ready_.push_back(std::move(chunk));
    if (!status.ok() || stream_end_) {
      inflate_status_ = status;
      inflated_all_ = true;
      changed_.notify_all();
      return;
    }
    changed_.notify_all();
  }
}

absl::StatusOr<size_t> ByteSource::ReadInflated(char* dst, size_t cap) {
  if (current_pos_ == current_.len) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!current_.bytes.empty()) spare_.push_back(std::move(current_.bytes));
    current_ = Inflated();
    current_pos_ = 0;
    changed_.wait(lock, [&] { return !ready_.empty() || inflated_all_; });
    if (ready_.empty()) {
      // Bytes inflated before a corrupt spot were handed out first, as
      // when inflating in line.
      if (!inflate_status_.ok()) return inflate_status_;
      truncated_seen_ = truncated_;
      return size_t{0};
    }
    current_ = std::move(ready_.front());
    ready_.pop_front();
    changed_.notify_all();
  }
  const size_t n = std::min(cap, current_.len - current_pos_);
  std::memcpy(dst, current_.bytes.data() + current_pos_, n);
  current_pos_ += n;
  return n;
}

absl::StatusOr<size_t> ByteSource::Read(char* dst, size_t cap) {
  if (gzip_) return ReadInflated(dst, cap);
  // Plain: hand out what is buffered first (the peeked chunk), then read
  // straight into the caller's buffer to avoid a copy.
  if (in_pos_ < in_len_) {
    size_t n = std::min(cap, in_len_ - in_pos_);
    std::memcpy(dst, in_.data() + in_pos_, n);
    in_pos_ += n;
    if (in_pos_ == in_len_) std::vector<char>().swap(in_);
    out_done_ += n;
    return n;
  }
  if (file_eof_) return size_t{0};
  while (true) {
    ssize_t n = ::read(fd_, dst, cap);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return PathError(errors_.path, errno, false);
    if (n == 0) {
      file_eof_ = true;
      return size_t{0};
    }
    file_done_ += static_cast<uint64_t>(n);
    out_done_ += static_cast<uint64_t>(n);
    if (progress_) progress_(file_done_, std::max(file_size_, file_done_));
    return static_cast<size_t>(n);
  }
}

absl::StatusOr<size_t> ByteSource::ReadGzip(char* dst, size_t cap) {
  size_t produced = 0;
  while (produced == 0 && !stream_end_) {
    if (in_pos_ == in_len_) {
      absl::StatusOr<bool> more = ReadRaw();
      if (!more.ok()) return more.status();
      if (!*more) {
        // The file ended inside a gzip member: a tracer was cut off. Hand out
        // what inflated; the JSON layer decides whether the text is usable.
        truncated_ = true;
        stream_end_ = true;
        break;
      }
    }
    zs_.next_in = reinterpret_cast<Bytef*>(in_.data() + in_pos_);
    zs_.avail_in = static_cast<uInt>(in_len_ - in_pos_);
    zs_.next_out = reinterpret_cast<Bytef*>(dst + produced);
    const uInt avail_out =
        static_cast<uInt>(std::min<size_t>(cap - produced, 1u << 30));
    zs_.avail_out = avail_out;
    int rc = inflate(&zs_, Z_NO_FLUSH);
    size_t used = (in_len_ - in_pos_) - zs_.avail_in;
    in_pos_ += used;
    size_t out = avail_out - zs_.avail_out;
    produced += out;
    out_done_ += out;
    if (rc == Z_STREAM_END) {
      // Another member may follow (concatenated gzip). Trailing zero bytes
      // (padding some tools add) end the stream.
      if (in_pos_ == in_len_) {
        absl::StatusOr<bool> more = ReadRaw();
        if (!more.ok()) return more.status();
        if (!*more) {
          stream_end_ = true;
          break;
        }
      }
      if (in_[in_pos_] == 0) {
        stream_end_ = true;
        break;
      }
      inflateReset(&zs_);
      continue;
    }
    if (rc == Z_BUF_ERROR && used == 0 && out == 0 && zs_.avail_in > 0) {
      return errors_.Error(out_done_, "a valid gzip stream",
                           "a stream zlib cannot advance");
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      return errors_.Error(
          out_done_, "a valid gzip stream",
          absl::StrCat("zlib error ", rc, " (", zs_.msg ? zs_.msg : "corrupt data", ")"));
    }
  }
  return produced;
}

}  // namespace tracetable::chrome_json
