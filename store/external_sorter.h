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
#include <atomic>
#include <concepts>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
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
  // The records available without a read, left in place; Skip(k) consumes
  // the first k of them.
  absl::Span<const Record> Available() const { return {cur_, static_cast<size_t>(end_ - cur_)}; }
  void Skip(size_t k) { cur_ += k; }
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

// One stable pass of an LSD radix sort: moves src[0, n) to dst in the order
// of byte `d` of key(record), whose counts are given.
template <typename Record, typename Count, typename KeyFn>
void RadixPass(const Record* src, Record* dst, size_t n, int d, const std::array<Count, 256>& counts, KeyFn key) {
  std::array<Count, 256> pos;
  Count sum = 0;
  for (int b = 0; b < 256; ++b) {
    pos[b] = sum;
    sum += counts[b];
  }
  for (size_t i = 0; i < n; ++i) dst[pos[(key(src[i]) >> (8 * d)) & 0xFF]++] = src[i];
}

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
    RadixPass(src, dst, n, d, counts[d], [](const Record& r) { return uint64_t{Less::Key(r)}; });
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

// Sorts a range that is nearly in order: the records below the last one
// kept go aside into `spare` (room for the range), are sorted there, and
// are merged back from the end. A trace writes a track's events in time
// order but for a few written late (a parent after its children): pdqsort
// recursed down to parts free of them, so one in 16k out of place still
// cost it ~log2(n / 16k) passes, and insertion moves each across all it
// passes (Kineto 3M: 108 records out of place among 3.8M).
template <typename Record, typename Less>
void SortNearlySorted(Record* first, Record* last, Record* spare, Less less) {
  Record* kept = first;
  size_t aside = 0;
  for (Record* p = first; p != last; ++p) {
    if (kept == first || !less(*p, *(kept - 1))) {
      if (kept != p) *kept = *p;
      ++kept;
    } else {
      spare[aside++] = *p;
    }
  }
  if (aside == 0) return;
  boost::sort::pdqsort(spare, spare + aside, less);
  Record* out = last;
  Record* a = kept;
  Record* b = spare + aside;
  while (b != spare) *--out = (a != first && less(*(b - 1), *(a - 1))) ? *--a : *--b;
}

// Sorts [first, last) in a grouped order by partitioning it by group first
// (a stable LSD radix sort on the group's low two bytes, through `scratch`,
// room for last - first records), then sorting each group on its own
// (SortNearlySorted). A trace's records come nearly in order within each
// track, interleaved with other tracks' (Kineto 3M: 7 tracks in blocks of
// ~3 records), so this takes a few passes over the records instead of n
// log n comparisons. Returns where each group starts, as GroupStarts does;
// or nothing, sorting nothing, when the groups differ above their low two
// bytes.
template <typename Less, typename Record>
std::optional<std::vector<std::pair<uint64_t, uint64_t>>> SortByGroupFirst(Record* first, Record* last,
                                                                             Record* scratch, Less less) {
  const size_t n = static_cast<size_t>(last - first);
  if (n == 0) return std::vector<std::pair<uint64_t, uint64_t>>{};
  std::array<std::array<uint32_t, 256>, 2> counts{};
  const uint64_t g0 = Less::Group(*first);
  uint64_t differ = 0;
  for (const Record* p = first; p != last; ++p) {
    const uint64_t g = Less::Group(*p);
    differ |= g ^ g0;
    ++counts[0][g & 0xFF];
    ++counts[1][(g >> 8) & 0xFF];
  }
  if (differ >> 16 != 0) return std::nullopt;
  Record* src = first;
  Record* dst = scratch;
  for (int d = 0; d < 2; ++d) {
    if (((differ >> (8 * d)) & 0xFF) == 0) continue;
    RadixPass(src, dst, n, d, counts[d], [](const Record& r) { return uint64_t{Less::Group(r)}; });
    std::swap(src, dst);
  }
  std::vector<std::pair<uint64_t, uint64_t>> starts = GroupStarts<Less>(src, src + n);
  Record* spare = src == first ? scratch : first;
  for (size_t i = 0; i < starts.size(); ++i) {
    const uint64_t begin = starts[i].second;
    const uint64_t end = i + 1 < starts.size() ? starts[i + 1].second : n;
    SortNearlySorted(src + begin, src + end, spare + begin, less);
  }
  if (src != first) std::memcpy(static_cast<void*>(first), src, n * sizeof(Record));
  return starts;
}

// A sorted part of the sorter's buffer and where its groups start in it.
struct SortedSegment {
  size_t begin = 0;
  std::vector<std::pair<uint64_t, uint64_t>> starts;  // relative to begin
};

// Sorts `v` in segments of up to `segment` records, each by
// SortByGroupFirst (or sorted whole where that declines), on two threads
// unless `one_thread`. Each thread partitions through a scratch of one
// segment, so the extra memory is bounded however many records there are;
// the segments are then merged like runs, whole spans at a time where one
// segment's records of a group all precede the next's (MergeCursors).
// Returns nothing, leaving `v` partly sorted, as soon as a segment holds
// more than `segment` / `min_group` groups: many small groups (tracks)
// would make as many slices to merge, so the caller sorts `v` otherwise,
// and the segments not yet done are not partitioned for nothing.
template <typename Less, typename Record>
std::optional<std::vector<SortedSegment>> SortSegments(std::vector<Record>* v, Less less, size_t segment,
                                                       size_t min_group, bool one_thread) {
  const size_t n = v->size();
  std::vector<SortedSegment> out((n + segment - 1) / segment);
  std::atomic<bool> too_many_groups{false};
  auto work = [&](size_t from, size_t step) {
    struct Free {
      void operator()(Record* p) const { ::operator delete(p); }
    };
    std::unique_ptr<Record, Free> scratch(
        static_cast<Record*>(::operator new(std::min(segment, n) * sizeof(Record))));
    for (size_t k = from; k < out.size() && !too_many_groups.load(std::memory_order_relaxed); k += step) {
      Record* first = v->data() + k * segment;
      Record* last = v->data() + std::min(n, (k + 1) * segment);
      out[k].begin = k * segment;
      auto starts = SortByGroupFirst(first, last, scratch.get(), less);
      if (!starts) {
        SortRange(first, last, less);
        starts = GroupStarts<Less>(first, last);
      }
      // Per full segment: a short last one may hold every group.
      if (starts->size() > segment / min_group) too_many_groups.store(true);
      out[k].starts = std::move(*starts);
    }
  };
  if (one_thread || out.size() < 2) {
    work(0, 1);
  } else {
    std::thread helper([&] {
      NameThisThread("tt-sort");
      work(1, 2);
    });
    work(0, 2);
    helper.join();
  }
  if (too_many_groups.load()) return std::nullopt;
  return out;
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
  // Each group's records come nearly in order (a trace's events on one
  // track): SortGroups() then partitions the buffer by group before
  // sorting each group (sorter_internal::SortByGroupFirst).
  void PartitionByGroupFirst()
    requires sorter_internal::GroupedOrder<Less, Record>
  {
    partition_by_group_ = true;
  }
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
    const size_t mid = sorter_internal::SortHalves(&buffer_, less_, one_thread_);
    if (absl::Status s = OpenRuns(); !s.ok()) return s;
    // Sources: the runs, then the buffer's two sorted halves.
    std::vector<Cursor> cursors;
    const size_t per_run = std::clamp<size_t>(read_budget / (std::max<size_t>(runs_.size(), 1) * sizeof(Record)), 1024, 1 << 16);
    for (size_t r = 0; r < runs_.size(); ++r) cursors.emplace_back(fds_[r], 0, run_sizes_[r], per_run);
    cursors.emplace_back(buffer_.data(), buffer_.data() + mid);
    cursors.emplace_back(buffer_.data() + mid, buffer_.data() + buffer_.size());
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
  // spilled run `source`, or for source runs(), of the buffer (which holds
  // several sorted parts).
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
    std::vector<SortedSegment> segments;
    // Each sorting thread's scratch is a part: at most 1/16 of the records
    // the sorter may hold.
    const size_t part = std::clamp<size_t>(max_records_ / 16, size_t{1} << 14, kSegmentRecords);
    if (partition_by_group_ && buffer_.size() > part / 2) {
      // Groups of fewer than 32 records a part (many small tracks): the
      // buffer is sorted in halves after all.
      std::optional<std::vector<SortedSegment>> sorted = SortSegments(&buffer_, less_, part, 32, one_thread_);
      if (sorted) segments = std::move(*sorted);
    }
    if (segments.empty()) {
      const size_t mid = SortHalves(&buffer_, less_, one_thread_);
      const Record* data = buffer_.data();
      segments.push_back({0, GroupStarts<Less>(data, data + mid)});
      segments.push_back({mid, GroupStarts<Less>(data + mid, data + buffer_.size())});
    }
    std::map<uint64_t, Group> groups;
    // `starts` relative to `offset` in source; `size` records from there.
    auto add = [&](size_t source, const std::vector<std::pair<uint64_t, uint64_t>>& starts, uint64_t offset,
                   uint64_t size) {
      for (size_t i = 0; i < starts.size(); ++i) {
        const uint64_t end = i + 1 < starts.size() ? starts[i + 1].second : size;
        Group& g = groups[starts[i].first];
        g.key = starts[i].first;
        g.records += end - starts[i].second;
        g.slices.push_back(Slice{source, offset + starts[i].second, offset + end});
      }
    };
    if (absl::Status s = OpenRuns(); !s.ok()) return s;
    for (size_t r = 0; r < runs_.size(); ++r) add(r, run_groups_[r], 0, run_sizes_[r]);
    for (size_t k = 0; k < segments.size(); ++k) {
      const size_t end = k + 1 < segments.size() ? segments[k + 1].begin : buffer_.size();
      add(runs_.size(), segments[k].starts, segments[k].begin, end - segments[k].begin);
    }
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
        cursors.emplace_back(buffer_.data() + s.begin, buffer_.data() + s.end);
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
  // as they lie, two are merged pairwise, more through a heap; ties go to
  // the earlier cursor. The cursor in front gives every record it holds
  // that comes before the next cursor's front at once: a track's records
  // in the buffer's sorted parts mostly follow one another in time, so they
  // go to fn as they lie, without a comparison against each other source
  // per record nor a copy.
  template <typename Cursor, typename Fn>
  absl::Status MergeCursors(std::vector<Cursor>& cursors, Fn&& fn) const {
    constexpr size_t kBatch = 1024;
    // Shorter runs are copied into the batch: fn is dearer per call.
    constexpr size_t kDirect = 16;
    std::array<Record, kBatch> batch;
    size_t n = 0;
    auto flush = [&]() -> absl::Status {
      if (n == 0) return absl::OkStatus();
      const size_t k = n;
      n = 0;
      return fn(absl::Span<const Record>(batch.data(), k));
    };
    auto put = [&](const Record& r) -> absl::Status {
      batch[n++] = r;
      return n < kBatch ? absl::OkStatus() : flush();
    };
    auto drain = [&](Cursor& c) -> absl::Status {
      if (absl::Status s = flush(); !s.ok()) return s;
      while (c.Fill()) {
        if (absl::Status s = fn(c.TakeAll()); !s.ok()) return s;
      }
      return absl::OkStatus();
    };
    // Takes c's records before `next` (at least its front, which is);
    // `c_first`: c is the earlier cursor, so it wins ties.
    auto take_run = [&](Cursor& c, bool c_first, const Record& next) -> absl::Status {
      const absl::Span<const Record> avail = c.Available();
      size_t k = 1;
      if (c_first) {
        while (k < avail.size() && !less_(next, avail[k])) ++k;
      } else {
        while (k < avail.size() && less_(avail[k], next)) ++k;
      }
      c.Skip(k);
      if (k < kDirect) {
        for (size_t i = 0; i < k; ++i) {
          if (absl::Status s = put(avail[i]); !s.ok()) return s;
        }
        return absl::OkStatus();
      }
      if (absl::Status s = flush(); !s.ok()) return s;
      return fn(avail.first(k));
    };
    if (cursors.size() == 1) return drain(cursors[0]);
    if (cursors.size() == 2) {
      Cursor& a = cursors[0];
      Cursor& b = cursors[1];
      while (a.Fill() && b.Fill()) {
        const bool b_first = less_(b.front(), a.front());
        absl::Status s = b_first ? take_run(b, false, a.front()) : take_run(a, true, b.front());
        if (!s.ok()) return s;
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
      if (heap.empty()) return drain(cursors[i]);
      const size_t j = heap.top();
      if (absl::Status s = take_run(cursors[i], i < j, cursors[j].front()); !s.ok()) return s;
      if (cursors[i].Fill()) heap.push(i);
    }
    return flush();
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
  bool one_thread_ = false;
  bool partition_by_group_ = false;
  // Records per sorted part of the buffer when partitioning by group, at
  // most: 3 MiB of 48-byte records, a sorting thread's scratch, which stays
  // in cache (gen 1M: 2% fewer instructions in the sort than with parts
  // four times as big, and 24 MB less peak RSS).
  static constexpr size_t kSegmentRecords = size_t{1} << 16;
};

}  // namespace tracetable

#endif  // TRACETABLE_STORE_EXTERNAL_SORTER_H_
