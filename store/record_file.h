// RecordFile: a temporary file of fixed-size records, written front to back
// and then read front to back once. For ingest stages whose working set
// would otherwise grow with the input (the memory profile's allocations):
// they park records here and keep only what is live in memory. Records go
// to the file 1 MiB at a time; as many as fit that buffer never reach it.
// The file is removed when the RecordFile dies. Record must be trivially
// copyable.
#ifndef TRACETABLE_STORE_RECORD_FILE_H_
#define TRACETABLE_STORE_RECORD_FILE_H_

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "store/external_sorter.h"

namespace tracetable {

template <typename Record>
class RecordFile {
  static_assert(std::is_trivially_copyable_v<Record>);

 public:
  explicit RecordFile(std::string path) : path_(std::move(path)) {}
  ~RecordFile() {
    file_.reset();
    if (created_) std::remove(path_.c_str());
  }
  RecordFile(const RecordFile&) = delete;
  RecordFile& operator=(const RecordFile&) = delete;

  absl::Status Append(const Record& r) {
    if (buffer_.size() == kBufferRecords) {
      if (absl::Status s = Flush(); !s.ok()) return s;
    }
    if (buffer_.capacity() == 0) buffer_.reserve(kBufferRecords);
    buffer_.push_back(r);
    ++size_;
    return absl::OkStatus();
  }
  uint64_t size() const { return size_; }

  // Ends writing; Next then reads the records in the order they came.
  // Records that never filled the buffer are read from it: no file.
  absl::Status StartReading() {
    next_ = 0;
    if (!file_) {
      read_ = size_;
      return absl::OkStatus();
    }
    if (absl::Status s = Flush(); !s.ok()) return s;
    if (std::fseek(file_.get(), 0, SEEK_SET) != 0) {
      return sorter_internal::IoError("cannot rewind spill file", path_);
    }
    read_ = 0;
    return absl::OkStatus();
  }
  // The next record; reading past the end or a short read is an error.
  absl::Status Next(Record* r) {
    if (next_ == buffer_.size()) {
      const uint64_t left = size_ - read_;
      if (left == 0 || !file_) return absl::InternalError(absl::StrCat("read past the end of ", path_));
      buffer_.resize(std::min<uint64_t>(left, kBufferRecords));
      if (std::fread(buffer_.data(), sizeof(Record), buffer_.size(), file_.get()) != buffer_.size()) {
        return sorter_internal::IoError("cannot read spill file", path_);
      }
      read_ += buffer_.size();
      next_ = 0;
    }
    *r = buffer_[next_++];
    return absl::OkStatus();
  }

 private:
  static constexpr size_t kBufferRecords = (size_t{1} << 20) / sizeof(Record) + 1;

  absl::Status Flush() {
    if (buffer_.empty()) return absl::OkStatus();
    if (!file_) {
      file_.reset(std::fopen(path_.c_str(), "w+b"));
      if (!file_) return sorter_internal::IoError("cannot create spill file", path_);
      created_ = true;
    }
    if (std::fwrite(buffer_.data(), sizeof(Record), buffer_.size(), file_.get()) != buffer_.size() ||
        std::fflush(file_.get()) != 0) {
      return sorter_internal::IoError("cannot write spill file (disk full?)", path_);
    }
    buffer_.clear();
    return absl::OkStatus();
  }

  std::string path_;
  sorter_internal::File file_;
  bool created_ = false;
  std::vector<Record> buffer_;
  uint64_t size_ = 0;  // records appended
  uint64_t read_ = 0;  // records read from the file into the buffer
  size_t next_ = 0;    // next record of the buffer to read
};

}  // namespace tracetable

#endif  // TRACETABLE_STORE_RECORD_FILE_H_
