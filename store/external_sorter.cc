#include "store/external_sorter.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <queue>
#include <thread>

#include "absl/strings/str_cat.h"

namespace tracetable {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { if (f) std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

absl::Status IoError(const std::string& what, const std::string& path) {
  return absl::InternalError(absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

// Reads one run sequentially through a fixed buffer.
class RunReader {
 public:
  RunReader(File file, size_t buffer_records)
      : file_(std::move(file)), buffer_(std::max<size_t>(buffer_records, 1)) {}
  // False at end of run.
  bool Next(SortRecord* out) {
    if (pos_ == len_) {
      len_ = std::fread(buffer_.data(), sizeof(SortRecord), buffer_.size(), file_.get());
      pos_ = 0;
      if (len_ == 0) return false;
    }
    *out = buffer_[pos_++];
    return true;
  }
  bool failed() const { return std::ferror(file_.get()) != 0; }

 private:
  File file_;
  std::vector<SortRecord> buffer_;
  size_t pos_ = 0, len_ = 0;
};

// Sorts on two threads: the halves in parallel, then one merge. Sorting is
// most of a spill's cost, and the reader keeps one core busy meanwhile only
// when there is input left.
void ParallelSort(std::vector<SortRecord>* v, ExternalSorter::Less less) {
  if (v->size() < (1u << 16)) {
    std::sort(v->begin(), v->end(), less);
    return;
  }
  auto mid = v->begin() + static_cast<std::ptrdiff_t>(v->size() / 2);
  std::thread half([&] { std::sort(v->begin(), mid, less); });
  std::sort(mid, v->end(), less);
  half.join();
  std::inplace_merge(v->begin(), mid, v->end(), less);
}

}  // namespace

ExternalSorter::ExternalSorter(std::string temp_prefix, Less less, size_t max_records)
    : temp_prefix_(std::move(temp_prefix)), less_(less), max_records_(std::max<size_t>(max_records, 1024)) {}

ExternalSorter::~ExternalSorter() {
  for (const std::string& run : runs_) std::remove(run.c_str());
}

absl::Status ExternalSorter::Spill() {
  if (buffer_.empty()) return absl::OkStatus();
  ParallelSort(&buffer_, less_);
  std::string path = absl::StrCat(temp_prefix_, ".run", runs_.size());
  File f(std::fopen(path.c_str(), "wb"));
  if (!f) return IoError("cannot create spill file", path);
  runs_.push_back(path);
  if (std::fwrite(buffer_.data(), sizeof(SortRecord), buffer_.size(), f.get()) != buffer_.size() ||
      std::fflush(f.get()) != 0) {
    return IoError("cannot write spill file (disk full?)", path);
  }
  spilled_ += buffer_.size();
  std::vector<SortRecord>().swap(buffer_);
  return absl::OkStatus();
}

absl::Status ExternalSorter::Merge(
    size_t read_budget, const std::function<absl::Status(const SortRecord&)>& fn) {
  ParallelSort(&buffer_, less_);
  if (runs_.empty()) {
    for (const SortRecord& r : buffer_) {
      if (absl::Status s = fn(r); !s.ok()) return s;
    }
    std::vector<SortRecord>().swap(buffer_);
    return absl::OkStatus();
  }
  const size_t per_run = std::clamp<size_t>(
      read_budget / (runs_.size() * sizeof(SortRecord)), 1024, 1 << 16);
  std::vector<std::unique_ptr<RunReader>> readers;
  for (const std::string& path : runs_) {
    File f(std::fopen(path.c_str(), "rb"));
    if (!f) return IoError("cannot reopen spill file", path);
    readers.push_back(std::make_unique<RunReader>(std::move(f), per_run));
  }
  // Heap entries: (record, source); source == runs_.size() is the buffer.
  struct Head {
    SortRecord rec;
    size_t source;
  };
  auto greater = [this](const Head& a, const Head& b) { return less_(b.rec, a.rec); };
  std::priority_queue<Head, std::vector<Head>, decltype(greater)> heap(greater);
  size_t buffer_pos = 0;
  auto advance = [&](size_t source) {
    SortRecord r;
    if (source == readers.size()) {
      if (buffer_pos < buffer_.size()) heap.push({buffer_[buffer_pos++], source});
    } else if (readers[source]->Next(&r)) {
      heap.push({r, source});
    }
  };
  for (size_t s = 0; s <= readers.size(); ++s) advance(s);
  while (!heap.empty()) {
    Head h = heap.top();
    heap.pop();
    if (absl::Status s = fn(h.rec); !s.ok()) return s;
    advance(h.source);
  }
  for (size_t s = 0; s < readers.size(); ++s) {
    if (readers[s]->failed()) return IoError("cannot read spill file", runs_[s]);
  }
  for (const std::string& run : runs_) std::remove(run.c_str());
  runs_.clear();
  spilled_ = 0;
  std::vector<SortRecord>().swap(buffer_);
  return absl::OkStatus();
}

}  // namespace tracetable
