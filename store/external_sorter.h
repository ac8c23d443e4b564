// Sorts a stream of SortRecords larger than memory: records are buffered, and
// the caller spills the buffer as a sorted run to a temporary file when its
// memory budget is reached; Merge() then streams all runs and the buffer in
// order with a k-way merge. Temporary files are removed when the sorter dies.
#ifndef TRACETABLE_STORE_EXTERNAL_SORTER_H_
#define TRACETABLE_STORE_EXTERNAL_SORTER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "store/sort_record.h"

namespace tracetable {

class ExternalSorter {
 public:
  using Less = bool (*)(const SortRecord&, const SortRecord&);
  // Holds at most `max_records` in memory; more spill a sorted run.
  ExternalSorter(std::string temp_prefix, Less less, size_t max_records);
  ~ExternalSorter();
  ExternalSorter(const ExternalSorter&) = delete;
  ExternalSorter& operator=(const ExternalSorter&) = delete;

  absl::Status Add(const SortRecord& r) {
    if (buffer_.size() == max_records_) {
      if (absl::Status s = Spill(); !s.ok()) return s;
    }
    if (buffer_.capacity() == 0) buffer_.reserve(max_records_);
    buffer_.push_back(r);
    return absl::OkStatus();
  }
  size_t size() const { return buffer_.size() + spilled_; }
  int runs() const { return static_cast<int>(runs_.size()); }

  // Sorts the buffer, writes it as a run and frees it.
  absl::Status Spill();

  // Calls fn for every record in order. `read_budget` bounds the bytes of
  // read buffers across runs. The sorter is empty afterwards.
  absl::Status Merge(size_t read_budget,
                     const std::function<absl::Status(const SortRecord&)>& fn);

 private:
  std::string temp_prefix_;
  Less less_;
  size_t max_records_;
  std::vector<SortRecord> buffer_;
  std::vector<std::string> runs_;
  uint64_t spilled_ = 0;
};

}  // namespace tracetable

#endif  // TRACETABLE_STORE_EXTERNAL_SORTER_H_
