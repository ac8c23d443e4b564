// ByteSource: the bytes of one input file, in chunks, with gzip inflated
// transparently (detected by the magic bytes 1f 8b, so a misnamed file still
// works). Only one compressed chunk and the caller's buffer are in memory.
//
// Contract:
//  - Open fails with NotFound for a missing file and InvalidArgument for a
//    directory or an unreadable file; messages start with the path.
//  - Read returns 0 only at the end of the stream. A gzip stream cut short
//    (common when a tracer is killed) ends the stream early and sets
//    truncated(); a corrupt one is an error naming the decompressed offset.
//  - Concatenated gzip members (as written by `cat a.gz b.gz`) are read as
//    one stream, like gzip -d does.
//  - gzip is inflated on a thread of its own, a few chunks ahead of Read, so
//    parsing never waits on zlib; `progress` is then called on that thread.
//    truncated() is meaningful once Read returned 0.
#ifndef TRACETABLE_INGEST_CHROME_JSON_BYTE_SOURCE_H_
#define TRACETABLE_INGEST_CHROME_JSON_BYTE_SOURCE_H_

#include <zlib.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ingest/chrome_json/input_error.h"

namespace tracetable::chrome_json {

class ByteSource {
 public:
  using Progress = std::function<void(uint64_t done, uint64_t total)>;

  static absl::StatusOr<std::unique_ptr<ByteSource>> Open(
      const std::string& path, Progress progress);
  ~ByteSource();
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  // Reads up to `cap` (> 0) bytes of the (decompressed) stream into `dst`.
  absl::StatusOr<size_t> Read(char* dst, size_t cap);

  bool gzip() const { return gzip_; }
  bool truncated() const { return gzip_ ? truncated_seen_ : truncated_; }
  uint64_t file_size() const { return file_size_; }
  const InputErrorContext& errors() const { return errors_; }

 private:
  ByteSource() = default;
  absl::Status InitGzip();
  // Reads the next raw chunk of the file into in_; false at end of file.
  absl::StatusOr<bool> ReadRaw();
  absl::StatusOr<size_t> ReadGzip(char* dst, size_t cap);
  // The inflating thread's loop, and Read's side of it.
  void Inflate();
  absl::StatusOr<size_t> ReadInflated(char* dst, size_t cap);

  int fd_ = -1;
  InputErrorContext errors_;
  Progress progress_;
  uint64_t file_size_ = 0;
  uint64_t file_done_ = 0;
  uint64_t out_done_ = 0;  // decompressed bytes handed out
  bool gzip_ = false;
  bool truncated_ = false;
  bool file_eof_ = false;
  bool stream_end_ = false;

  // Compressed input (gzip only) and the peeked first bytes (plain files).
  std::vector<char> in_;
  size_t in_pos_ = 0;
  size_t in_len_ = 0;
  z_stream zs_{};
  bool zs_init_ = false;

  // gzip: chunks inflated ahead. Everything above belongs to the inflating
  // thread once it runs, except what Read copies under mu_ at the end.
  struct Inflated {
    std::vector<char> bytes;
    size_t len = 0;
  };
  std::thread inflater_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<Inflated> ready_;
  std::vector<std::vector<char>> spare_;
  bool inflated_all_ = false;  // ready_ is all that is left
  bool stop_ = false;
  absl::Status inflate_status_;
  Inflated current_;  // Read's chunk
  size_t current_pos_ = 0;
  bool truncated_seen_ = false;  // truncated_, as Read saw it at the end
};

}  // namespace tracetable::chrome_json

#endif  // TRACETABLE_INGEST_CHROME_JSON_BYTE_SOURCE_H_
