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
#ifndef TRACETABLE_INGEST_CHROME_JSON_BYTE_SOURCE_H_
#define TRACETABLE_INGEST_CHROME_JSON_BYTE_SOURCE_H_

#include <zlib.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
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
  bool truncated() const { return truncated_; }
  uint64_t file_size() const { return file_size_; }
  const InputErrorContext& errors() const { return errors_; }

 private:
  ByteSource() = default;
  absl::Status InitGzip();
  // Reads the next raw chunk of the file into in_; false at end of file.
  absl::StatusOr<bool> ReadRaw();
  absl::StatusOr<size_t> ReadGzip(char* dst, size_t cap);

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
};

}  // namespace tracetable::chrome_json

#endif  // TRACETABLE_INGEST_CHROME_JSON_BYTE_SOURCE_H_
