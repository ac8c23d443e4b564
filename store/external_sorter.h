// Sorts a stream of fixed-size records larger than memory: records are
// buffered, and when `max_records` are buffered the buffer is sorted and
// spilled as a run to a temporary file; Merge() then streams all runs and the
// buffer in order with a k-way merge. Temporary files are removed when the
// sorter dies. Record must be trivially copyable.
//
// Less is a function pointer by default; a hot sorter names a comparison
// type instead (e.g. LessFn<TrackTimeLess>), so std::sort and the merge
// inline it rather than call through a pointer per comparison.
//
// Grouped reading: when the order's first key is a group (the order type
// has `static uint64_t Group(const Record&)`, e.g. a track), SortGroups()
// lists each group's records in every sorted run instead of merging them
// all, and ReadGroup() merges one group: different groups on different
// threads at once, in any order.
#ifndef TRACETABLE_STORE_EXTERNAL_SORTER_H_
#define TRACETABLE_STORE_EXTERNAL_SORTER_H_

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <concepts>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "boost/sort/pdqsort/pdqsort.hpp"
#include "store/page_warmer.h"
#include "store/thread_name.h"

namespace tracetable {
namespace sorter_internal {

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f) std::fclose(f);
  }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

inline absl::Status IoError(const std::string& what, const std::string& path) {
  return absl::InternalError(absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

// Asks for transparent huge pages on a large buffer: filling it then takes
// one page fault per 2 MiB instead of per 4 KiB (faults were a sixth of
// ingest time). Only a hint; ignored where unsupported.
inline void AdviseHugePages(void* data, size_t bytes) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHuge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

// An order that is exactly the order of a 64-bit key of the record (its type
// has `static uint64_t Key(const Record&)`, and records with equal keys are
// equal) is sorted by radix: a few linear passes instead of n log n
// comparisons (search postings: 824k of them at 1M events, 3% of an ingest
// in std::sort).
template <typename Less, typename Record>
concept RadixOrder = requires(const Record& r) {
  { Less::Key(r) } -> std::convertible_to<uint64_t>;
};

// An order whose first key is a group: records of one group are adjacent in
// every sorted run.
template <typename Less, typename Record>
concept GroupedOrder = requires(const Record& r) {
  { Less::Group(r) } -> std::convertible_to<uint64_t>;
};

// Where each group starts in a sorted range: (group, first index) pairs.
template <typename Less, typename Record>
std::vector<std::pair<uint64_t, uint64_t>> GroupStarts(const Record* first, const Record* last) {
  std::vector<std::pair<uint64_t, uint64_t>> starts;
  for (const Record* p = first; p != last;) {
    const uint64_t g = Less::Group(*p);
    starts.emplace_back(g, static_cast<uint64_t>(p - first));
    p = std::partition_point(p, last, [g](const Record& r) { return Less::Group(r) == g; });
  }
  return starts;
}

// One group's records in one sorted source, read in order: a range of the
// sorter's buffer, or of a spilled run read with pread through a buffer
// (so cursors of one file on several threads do not share a position).
template <typename Record>
class SliceCursor {
 public:
  SliceCursor(const Record* first, const Record* last) : cur_(first), end_(last) {}
  SliceCursor(int fd, uint64_t first, uint64_t last, size_t buffer_records)
      : fd_(fd), next_(first), stop_(last),
        buffer_(std::min<uint64_t>(std::max<size_t>(buffer_records, 1), last - first)) {}
  // False at the end of the slice or on a read error (then failed()).
  bool Fill() {
    if (cur_ != end_) return true;
    if (fd_ < 0 || next_ == stop_ || failed_) return false;
    const size_t n = static_cast<size_t>(std::min<uint64_t>(buffer_.size(), stop_ - next_));
    char* to = reinterpret_cast<char*>(buffer_.data());
    size_t want = n * sizeof(Record);
    off_t at = static_cast<off_t>(next_ * sizeof(Record));
    while (want > 0) {
      const ssize_t got = ::pread(fd_, to, want, at);
      if (got <= 0) {
        if (got < 0 && errno == EINTR) continue;
        failed_ = true;
        return false;
      }
      to += got;
      at += got;
      want -= static_cast<size_t>(got);
    }
    next_ += n;
    cur_ = buffer_.data();
    end_ = cur_ + n;
    return true;
  }
  const Record& front() const { return *cur_; }
  void pop() { ++cur_; }
  // The records available without a read; consumes them.
  absl::Span<const Record> TakeAll() {
    absl::Span<const Record> all(cur_, static_cast<size_t>(end_ - cur_));
    cur_ = end_;
    return all;
  }
  bool failed() const { return failed_; }

 private:
  const Record* cur_ = nullptr;
  const Record* end_ = nullptr;
  int fd_ = -1;
  uint64_t next_ = 0, stop_ = 0;
  std::vector<Record> buffer_;
  bool failed_ = false;
};

// LSD radix sort by bytes of the key, skipping bytes all keys share. Needs a
// scratch copy of the range while it sorts.
template <typename Less, typename Record>
void RadixSort(Record* data, size_t n) {
  if (n < 2) return;
  std::vector<std::array<size_t, 256>> counts(8);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t k = Less::Key(data[i]);
    for (int d = 0; d < 8; ++d) ++counts[d][(k >> (8 * d)) & 0xFF];
  }
  std::vector<Record> scratch(n);
  Record* src = data;
  Record* dst = scratch.data();
  for (int d = 0; d < 8; ++d) {
    if (std::find(counts[d].begin(), counts[d].end(), n) != counts[d].end()) continue;
    std::array<size_t, 256> pos;
    size_t sum = 0;
    for (int b = 0; b < 256; ++b) {
      pos[b] = sum;
      sum += counts[d][b];
    }
    for (size_t i = 0; i < n; ++i) dst[pos[(Less::Key(src[i]) >> (8 * d)) & 0xFF]++] = src[i];
    std::swap(src, dst);
  }
  if (src != data) std::memcpy(static_cast<void*>(data), src, n * sizeof(Record));
}

template <typename Record, typename Less>
void SortRange(Record* first, Record* last, Less less) {
  if constexpr (RadixOrder<Less, Record>) {
    RadixSort<Less>(first, static_cast<size_t>(last - first));
  } else {
    // Faster than std::sort on these records (it makes use of the runs
    // already in order): gen 10M's main sort 0.28 s -> 0.23 s, Kineto 3M's
    // 0.10 -> 0.09 s (3 and 2 runs each).
    boost::sort::pdqsort(first, last, less);
  }
}

// Sorts the two halves of `v` on two threads and returns where the second
// starts. The halves are merged by the k-way merge like any other runs, so
// no n/2 temporary buffer is needed. `one_thread`: sorts it whole here.
template <typename Record, typename Less>
size_t SortHalves(std::vector<Record>* v, Less less, bool one_thread) {
  Record* begin = v->data();
  Record* end = begin + v->size();
  if (one_thread || v->size() < (1u << 16)) {
    SortRange(begin, end, less);
    return v->size();
  }
  const size_t half = v->size() / 2;
  Record* mid = begin + half;
  std::thread first([&] {
    NameThisThread("tt-sort");
    SortRange(begin, mid, less);
  });
  SortRange(mid, end, less);
  first.join();
  return half;
}

}  // namespace sorter_internal

// A comparison function as a type (see the header comment).
template <auto kLess>
struct LessFn {
  template <typename Record>
  bool operator()(const Record& a, const Record& b) const {
    return kLess(a, b);
  }
};

template <typename Record, typename Less = bool (*)(const Record&, const Record&)>
class ExternalSorter {
  static_assert(std::is_trivially_copyable_v<Record>);

 public:
  // Holds at most `max_records` in memory; more spill a sorted run.
  ExternalSorter(std::string temp_prefix, Less less, size_t max_records)
      : temp_prefix_(std::move(temp_prefix)), less_(less),
        max_records_(std::max<size_t>(max_records, 1024)) {}
  ~ExternalSorter() { Clear(); }
  ExternalSorter(const ExternalSorter&) = delete;
  ExternalSorter& operator=(const ExternalSorter&) = delete;

  absl::Status Add(const Record& r) {
    if (buffer_.size() == max_records_) {
      if (absl::Status s = Spill(); !s.ok()) return s;
    }
    if (buffer_.capacity() == 0) {
      buffer_.reserve(std::max(max_records_, reserve_records_));
      sorter_internal::AdviseHugePages(buffer_.data(), buffer_.capacity() * sizeof(Record));
      if (warm_ahead_ > 0) {
        warmer_ = std::make_unique<PageWarmer>(buffer_.data(), max_records_ * sizeof(Record), warm_ahead_);
      }
    }
    buffer_.push_back(r);
    if (warmer_ && buffer_.size() % kWarmStepRecords == 0) warmer_->Filled(buffer_.size() * sizeof(Record));
    return absl::OkStatus();
  }

  // Has the buffer's pages faulted in up to `bytes` ahead of the records
  // added, off the adding thread when a core is idle (store/page_warmer.h).
  // Takes effect when the buffer is first reserved.
  void WarmAhead(size_t bytes) { warm_ahead_ = bytes; }
  // At most `records` more will be added: the page warmer stops short of
  // pages past them.
  void ExpectAtMost(size_t records) {
    if (warmer_) warmer_->SetEnd(std::min(max_records_, buffer_.size() + records) * sizeof(Record));
  }
  // Sorts on the calling thread only, for one of several sorters sorted at
  // once on as many threads (the search index's partitions): a second
  // thread each would only crowd the cores, and its half costs a merge pass
  // (gen 10M: ~60 ms of CPU).
  void SortOnCallingThread() { one_thread_ = true; }
  // Reserves room for `records` when the buffer is first filled, so that
  // SetMaxRecords can raise the limit up to it later without moving the
  // buffer (only the pages records are written to are touched).
  void ReserveUpTo(size_t records) { reserve_records_ = records; }
  size_t size() const { return buffer_.size() + spilled_; }
  size_t buffered() const { return buffer_.size(); }
  // Calls fn on each record still in memory, which may change it (the
  // buffer is sorted only when merged), and returns true; calls nothing and
  // returns false once some have spilled: those are sorted already.
  template <typename Fn>
  bool RewriteIfNoneSpilled(Fn&& fn) {
    if (!runs_.empty()) return false;
    for (Record& r : buffer_) fn(r);
    return true;
  }
  size_t max_records() const { return max_records_; }

  // Holds at most `max_records` from now on (at least 1024, as at
  // construction): a smaller limit spills what is over it, and hands the
  // pages of the buffer beyond the new limit back to the system, which
  // shrinking the vector would not (the pages stay resident until unmapped
  // or advised away, and the buffer never refills them). A limit above the
  // buffer's capacity takes effect at the next fill after a merge.
  absl::Status SetMaxRecords(size_t max_records) {
    max_records = std::max<size_t>(max_records, 1024);
    const size_t old = max_records_;
    if (max_records >= old) {
      // Only up to what is reserved: pushing past capacity would reallocate.
      if (buffer_.capacity() == 0) max_records_ = max_records;
      else max_records_ = std::min(max_records, buffer_.capacity());
      return absl::OkStatus();
    }
    max_records_ = max_records;
    if (buffer_.size() >= max_records_) {
      if (absl::Status s = Spill(); !s.ok()) return s;
    }
    if (warmer_) warmer_->SetEnd(max_records_ * sizeof(Record));
    ReleasePagesFrom(max_records_);
    return absl::OkStatus();
  }
  int runs() const { return static_cast<int>(runs_.size()); }

  // Sorts the buffer and writes it as runs. The buffer keeps its capacity:
  // it fills again at once, and its pages are already faulted in.
  absl::Status Spill() {
    using namespace sorter_internal;
    if (buffer_.empty()) return absl::OkStatus();
    const size_t mid = SortHalves(&buffer_, less_, one_thread_);
    for (auto [first, last] : {std::pair<size_t, size_t>{0, mid}, {mid, buffer_.size()}}) {
      if (first == last) continue;
      std::string path = absl::StrCat(temp_prefix_, ".run", runs_.size());
      File f(std::fopen(path.c_str(), "wb"));
      if (!f) return IoError("cannot create spill file", path);
      runs_.push_back(path);
      const size_t n = last - first;
      run_sizes_.push_back(n);
      if constexpr (sorter_internal::GroupedOrder<Less, Record>) {
        run_groups_.push_back(GroupStarts<Less>(buffer_.data() + first, buffer_.data() + last));
      }
      if (std::fwrite(buffer_.data() + first, sizeof(Record), n, f.get()) != n ||
          std::fflush(f.get()) != 0) {
        return IoError("cannot write spill file (disk full?)", path);
      }
    }
    spilled_ += buffer_.size();
    buffer_.clear();
    return absl::OkStatus();
  }

  // Calls fn for every record in order. `read_budget` bounds the bytes of
  // read buffers across runs. The sorter is empty afterwards, and can be
  // filled again.
  template <typename Fn>
  absl::Status Merge(size_t read_budget, Fn&& fn) {
    using Cursor = sorter_internal::SliceCursor<Record>;
    StopWarmer();
    mid_ = sorter_internal::SortHalves(&buffer_, less_, one_thread_);
    if (absl::Status s = OpenRuns(); !s.ok()) return s;
    // Sources: the runs, then the buffer's two sorted halves.
    std::vector<Cursor> cursors;
    const size_t per_run = std::clamp<size_t>(read_budget / (std::max<size_t>(runs_.size(), 1) * sizeof(Record)), 1024, 1 << 16);
    for (size_t r = 0; r < runs_.size(); ++r) cursors.emplace_back(fds_[r], 0, run_sizes_[r], per_run);
    cursors.emplace_back(buffer_.data(), buffer_.data() + mid_);
    cursors.emplace_back(buffer_.data() + mid_, buffer_.data() + buffer_.size());
    absl::Status st = MergeCursors(cursors, [&](absl::Span<const Record> span) -> absl::Status {
      for (const Record& r : span) {
        if (absl::Status s = fn(r); !s.ok()) return s;
      }
      return absl::OkStatus();
    });
    for (size_t r = 0; r < runs_.size(); ++r) {
      if (cursors[r].failed()) return sorter_internal::IoError("cannot read spill file", runs_[r]);
    }
    if (!st.ok()) return st;
    Clear();
    return absl::OkStatus();
  }

  // A group's records in one sorted source: records [begin, end) of
  // spilled run `source`, or for source runs() and runs() + 1, of the
  // buffer's sorted halves.
  struct Slice {
    size_t source;
    uint64_t begin, end;
  };
  struct Group {
    uint64_t key;
    uint64_t records;
    std::vector<Slice> slices;
  };

  // Sorts the buffer and lists the groups in order with where their records
  // lie. ReadGroup() may then be called for any of them, from any threads
  // at once, until Clear(); nothing may be added before it.
  absl::StatusOr<std::vector<Group>> SortGroups()
    requires sorter_internal::GroupedOrder<Less, Record>
  {
    using namespace sorter_internal;
    StopWarmer();
    mid_ = SortHalves(&buffer_, less_, one_thread_);
    std::map<uint64_t, Group> groups;
    auto add = [&](size_t source, const std::vector<std::pair<uint64_t, uint64_t>>& starts, uint64_t size) {
      for (size_t i = 0; i < starts.size(); ++i) {
        const uint64_t end = i + 1 < starts.size() ? starts[i + 1].second : size;
        Group& g = groups[starts[i].first];
        g.key = starts[i].first;
        g.records += end - starts[i].second;
        g.slices.push_back(Slice{source, starts[i].second, end});
      }
    };
    if (absl::Status s = OpenRuns(); !s.ok()) return s;
    for (size_t r = 0; r < runs_.size(); ++r) add(r, run_groups_[r], run_sizes_[r]);
    const Record* data = buffer_.data();
    add(runs_.size(), GroupStarts<Less>(data, data + mid_), mid_);
    add(runs_.size() + 1, GroupStarts<Less>(data + mid_, data + buffer_.size()), buffer_.size() - mid_);
    std::vector<Group> out;
    out.reserve(groups.size());
    for (auto& [key, g] : groups) out.push_back(std::move(g));
    return out;
  }

  // Calls fn with the group's records in order, in spans (of the buffer
  // where one source holds them all, else of merged copies). Spilled runs
  // are read through `buffer_records` records each.
  template <typename Fn>
  absl::Status ReadGroup(const Group& group, size_t buffer_records, Fn&& fn) const {
    using Cursor = sorter_internal::SliceCursor<Record>;
    std::vector<Cursor> cursors;
    cursors.reserve(group.slices.size());
    for (const Slice& s : group.slices) {
      if (s.source < runs_.size()) {
        cursors.emplace_back(fds_[s.source], s.begin, s.end, buffer_records);
      } else {
        const Record* base = buffer_.data() + (s.source == runs_.size() ? 0 : mid_);
        cursors.emplace_back(base + s.begin, base + s.end);
      }
    }
    absl::Status st = MergeCursors(cursors, fn);
    for (size_t i = 0; i < cursors.size(); ++i) {
      if (cursors[i].failed()) return sorter_internal::IoError("cannot read spill file", runs_[group.slices[i].source]);
    }
    return st;
  }

  // Drops every record and spilled run, and hands the buffer's pages back
  // to the system while keeping its address range until the sorter is
  // destroyed. Unmapping takes the process's address-space lock for
  // writing, so it waits for every page fault under way in any thread: the
  // main sorter's page warmer faults 2 MiB at a time, up to 14 ms each on a
  // VM, with the building thread stuck in munmap meanwhile (gen 1M, the
  // match sorter freed at the end of reading: `perf sched`). madvise takes
  // it for reading and waits for none.
  void ReleasePages() {
    Clear();
    ReleasePagesFrom(0);
  }

  // Drops every record and spilled run; the sorter can be filled again
  // (the buffer keeps its pages).
  void Clear() {
    for (int fd : fds_) ::close(fd);
    fds_.clear();
    for (const std::string& run : runs_) std::remove(run.c_str());
    runs_.clear();
    run_groups_.clear();
    run_sizes_.clear();
    spilled_ = 0;
    mid_ = 0;
    buffer_.clear();
  }

 private:
  // Filled: the warmer would only fault in pages no record will use, on
  // the core the sort wants (gen 10M: ~0.1 CPU-s after reading). Not
  // waiting for it: a step under way can take a fresh 2 MiB 9 ms on a VM,
  // with the sort's second core idle meanwhile (gen 1M). It ends before the
  // buffer is freed (warmer_ is destroyed first).
  void StopWarmer() {
    if (warmer_) warmer_->Stop();
  }

  // Hands back the whole pages of the buffer's room from record `first` on.
  void ReleasePagesFrom(size_t first) {
    if (buffer_.capacity() == 0) return;
    constexpr uintptr_t kPage = 4096;
    const uintptr_t begin = (reinterpret_cast<uintptr_t>(buffer_.data() + first) + kPage - 1) & ~(kPage - 1);
    const uintptr_t end = reinterpret_cast<uintptr_t>(buffer_.data() + buffer_.capacity()) & ~(kPage - 1);
    if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
  }

  // Opens the spilled runs for reading (with pread: any thread, any order).
  absl::Status OpenRuns() {
    for (size_t r = fds_.size(); r < runs_.size(); ++r) {
      const int fd = ::open(runs_[r].c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) return sorter_internal::IoError("cannot reopen spill file", runs_[r]);
      fds_.push_back(fd);
    }
    return absl::OkStatus();
  }

  // Merges the cursors' records into spans for fn: one cursor's are passed
  // as they lie, two are merged pairwise, more through a heap.
  template <typename Cursor, typename Fn>
  absl::Status MergeCursors(std::vector<Cursor>& cursors, Fn&& fn) const {
    constexpr size_t kBatch = 1024;
    std::array<Record, kBatch> batch;
    size_t n = 0;
    auto put = [&](const Record& r) -> absl::Status {
      batch[n++] = r;
      if (n < kBatch) return absl::OkStatus();
      n = 0;
      return fn(absl::Span<const Record>(batch.data(), kBatch));
    };
    auto drain = [&](Cursor& c) -> absl::Status {
      if (n > 0) {
        if (absl::Status s = fn(absl::Span<const Record>(batch.data(), n)); !s.ok()) return s;
        n = 0;
      }
      while (c.Fill()) {
        if (absl::Status s = fn(c.TakeAll()); !s.ok()) return s;
      }
      return absl::OkStatus();
    };
    if (cursors.size() == 1) return drain(cursors[0]);
    if (cursors.size() == 2) {
      Cursor& a = cursors[0];
      Cursor& b = cursors[1];
      while (a.Fill() && b.Fill()) {
        // Ties go to the first source, as in Merge().
        Cursor& c = less_(b.front(), a.front()) ? b : a;
        if (absl::Status s = put(c.front()); !s.ok()) return s;
        c.pop();
      }
      if (absl::Status s = drain(a); !s.ok()) return s;
      return drain(b);
    }
    auto greater = [&](size_t x, size_t y) {
      return less_(cursors[y].front(), cursors[x].front()) ||
             (!less_(cursors[x].front(), cursors[y].front()) && y < x);
    };
    std::priority_queue<size_t, std::vector<size_t>, decltype(greater)> heap(greater);
    for (size_t i = 0; i < cursors.size(); ++i) {
      if (cursors[i].Fill()) heap.push(i);
    }
    while (!heap.empty()) {
      const size_t i = heap.top();
      heap.pop();
      if (absl::Status s = put(cursors[i].front()); !s.ok()) return s;
      cursors[i].pop();
      if (cursors[i].Fill()) heap.push(i);
    }
    if (n == 0) return absl::OkStatus();
    return fn(absl::Span<const Record>(batch.data(), n));
  }

  std::string temp_prefix_;
  Less less_;
  size_t max_records_;
  std::vector<Record> buffer_;
  static constexpr size_t kWarmStepRecords = std::max<size_t>((size_t{1} << 20) / sizeof(Record), 1);
  size_t warm_ahead_ = 0;
  size_t reserve_records_ = 0;
  std::unique_ptr<PageWarmer> warmer_;  // declared after buffer_: stops before it is freed
  std::vector<std::string> runs_;
  uint64_t spilled_ = 0;
  std::vector<uint64_t> run_sizes_;  // records of each run
  // For grouped orders: where each run's groups start.
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> run_groups_;
  std::vector<int> fds_;  // the runs, open while groups are read
  size_t mid_ = 0;        // where the buffer's second sorted half starts
  bool one_thread_ = false;
};

}  // namespace tracetable

#endif  // TRACETABLE_STORE_EXTERNAL_SORTER_H_
