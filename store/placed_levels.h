// PlacedLevels: one track's placed events (store/track_writer.h hands each
// to its storage level once that is known), kept per level in PlacedLess
// order as they come, so writing the event tiles needs no sort of the whole
// track.
//
// Why this is cheap: a level's events arrive almost in order. An event is
// placed when its summary group closes or gains a second member, and the
// groups of one bin close in hash order, so the disorder stays within a bin
// (13-27% of consecutive records out of order on the bench traces, but only
// locally). Each level's tail is sorted every kChunk records and merged with
// the sorted part only where the two overlap. Nothing rests on that being
// true: a level whose overlap grows past kChunk is sorted whole by Drain(),
// so the order is always exact and the cost never above one sort.
//
// Streaming: ReleaseBefore() hands over each level's records that start
// before a time no later record of that level will start before (the track
// writer's bins give one), so a track's events need not all wait for its
// end (store/track_pool.cc).
//
// Memory: at most `max_records` records; Add() returns false when full, and
// the caller drains them, in order, to an external sorter's sorted run for
// this track and fills them again. The buffers keep their capacity, so such
// a track holds twice its share (the sorter's buffer beside them).
#ifndef TRACETABLE_STORE_PLACED_LEVELS_H_
#define TRACETABLE_STORE_PLACED_LEVELS_H_

#include <algorithm>
#include <cstddef>
#include <vector>

#include "absl/status/status.h"
#include "boost/sort/pdqsort/pdqsort.hpp"
#include "store/external_sorter.h"
#include "store/sort_record.h"

namespace tracetable {

class PlacedLevels {
 public:
  explicit PlacedLevels(size_t max_records) : max_records_(max_records) {}

  // False (nothing added) when `max_records` are held.
  bool Add(const PlacedRecord& p) {
    return AddInPlace(p.level, [&p](PlacedRecord* q) { *q = p; });
  }
  // Add() of the record fill(PlacedRecord*) writes in place, with its
  // level set to `level`: a record built on the stack and copied in was
  // read back whole right after its fields were stored one by one, which
  // waits for the stores (the tile workers' Place: half its samples).
  template <typename Fill>
  bool AddInPlace(uint32_t level, Fill fill) {
    if (size_ >= max_records_) return false;
    if (level >= levels_.size()) levels_.resize(level + 1);
    Level& l = levels_[level];
    fill(&l.records.emplace_back());
    ++size_;
    if (l.records.size() - l.sorted >= kChunk) SortTail(&l);
    return true;
  }

  size_t size() const { return size_; }

  // Calls fn(record), level by level in PlacedLess order, for the records
  // of each level that start before `watermark(level)`, and drops them:
  // the caller's promise that no record added later to that level starts
  // before it, so these come first among the level's records for good.
  template <typename Watermark, typename Fn>
  absl::Status ReleaseBefore(Watermark watermark, Fn fn) {
    for (size_t level = 0; level < levels_.size(); ++level) {
      Level& l = levels_[level];
      if (l.records.empty()) continue;
      SortTail(&l);
      if (l.unordered) {
        boost::sort::pdqsort(l.records.begin(), l.records.end(), kLess);
        l.unordered = false;
      }
      const int64_t before = watermark(static_cast<uint32_t>(level));
      const auto cut = std::partition_point(l.records.begin(), l.records.end(),
                                            [before](const PlacedRecord& p) { return p.event.ts < before; });
      for (auto it = l.records.begin(); it != cut; ++it) {
        if (absl::Status s = fn(*it); !s.ok()) return s;
      }
      size_ -= static_cast<size_t>(cut - l.records.begin());
      l.records.erase(l.records.begin(), cut);
      l.sorted = l.records.size();
    }
    return absl::OkStatus();
  }

  // Calls fn(record) for every record in PlacedLess order, then empties
  // (keeping capacity: buffers freed and grown again track after track, or
  // fill after fill, cost more in fresh pages than their records).
  template <typename Fn>
  absl::Status Drain(Fn fn) {
    absl::Status st;
    for (Level& l : levels_) {
      SortTail(&l);
      if (l.unordered) boost::sort::pdqsort(l.records.begin(), l.records.end(), kLess);
      for (const PlacedRecord& p : l.records) {
        if (st.ok()) st = fn(p);
      }
      l.records.clear();
      l.sorted = 0;
      l.unordered = false;
    }
    size_ = 0;
    return st;
  }

 private:
  static constexpr size_t kChunk = 4096;
  static constexpr LessFn<PlacedLess> kLess{};  // inlined, unlike a function pointer

  struct Level {
    std::vector<PlacedRecord> records;
    size_t sorted = 0;       // records[0, sorted) are in order
    bool unordered = false;  // given up: sorted whole at the end
  };

  void SortTail(Level* l) {
    if (l->unordered) return;
    auto begin = l->records.begin();
    auto mid = begin + static_cast<std::ptrdiff_t>(l->sorted);
    boost::sort::pdqsort(mid, l->records.end(), kLess);
    if (mid != begin && mid != l->records.end() && kLess(*mid, *(mid - 1))) {
      // Merge only the sorted records the tail reaches back past.
      auto from = std::upper_bound(begin, mid, *mid, kLess);
      if (static_cast<size_t>(mid - from) > kChunk) {
        l->unordered = true;
        return;
      }
      // The overlap (at most kChunk) moves to a reused buffer and is merged
      // back with the tail: no allocation per merge (std::inplace_merge
      // takes a fresh buffer each time, and fresh pages are slow here).
      scratch_.assign(from, mid);
      std::merge(scratch_.begin(), scratch_.end(), mid, l->records.end(), from, kLess);
    }
    l->sorted = l->records.size();
  }

  size_t max_records_;
  size_t size_ = 0;
  std::vector<Level> levels_;
  std::vector<PlacedRecord> scratch_;
};

}  // namespace tracetable

#endif  // TRACETABLE_STORE_PLACED_LEVELS_H_
