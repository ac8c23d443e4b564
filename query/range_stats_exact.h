// Exact range statistics from events read one by one: the part of
// query/range_stats.h that both the path over every event of the range and
// the path over bucket aggregates (query/range_stats_index.h) share, so the
// two give the same answer by construction.
//
// Contract: AddTrackRows takes rows of one non-counter track, in StatsOrder,
// that include,
// with every slice among them, every slice containing it (a container
// overlaps whatever its contents overlap, so any set of "all events
// overlapping X" qualifies), each at most once. Each row counts once
// toward its name and track; a slice adds its part inside [a, b] to total,
// min and max, and its self time: that part minus its children's parts,
// minus `outside` time of its children not among the rows (keyed by the
// slice's event id), at least 0. A slice's parent is the slice containing
// it with the greatest lane below its own among those before it in (ts,
// longer first, id) order — the order the ingest saw them in
// (store/stats_index_writer.h).
//
// A StatsTally keeps names in a flat array indexed by string id (names are
// dense ids below the table's string count), so adding a row costs an
// index, not a hash; tallies filled on different threads Merge exactly.
#ifndef TRACETABLE_QUERY_RANGE_STATS_EXACT_H_
#define TRACETABLE_QUERY_RANGE_STATS_EXACT_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "format/event.h"
#include "query/range_stats.h"

namespace tracetable {

// What statistics need of an event: 40 bytes instead of a TileRow's 112.
struct StatsRow {
  int64_t ts = 0;
  int64_t dur = 0;
  uint64_t id = 0;
  uint32_t name = 0;
  uint32_t lane = 0;
  EventKind kind = EventKind::kSlice;
};

class StatsTally {
 public:
  explicit StatsTally(size_t num_strings) : slot_(num_strings, 0) {}

  // Folds a whole aggregate (from a bucket, or counted elsewhere) in.
  void AddName(uint32_t name, const RangeAgg& a) { Fold(&Name(name), a); }
  void AddTrack(uint32_t track, const RangeAgg& a);
  void Merge(const StatsTally& other);
  // Sorted as RangeStats wants them.
  void MoveInto(RangeStats* out);

  RangeAgg& Name(uint32_t name) {
    if (name >= slot_.size()) slot_.resize(name + 1, 0);
    if (slot_[name] == 0) {
      names_.emplace_back(name, RangeAgg{});
      slot_[name] = static_cast<uint32_t>(names_.size());
    }
    return names_[slot_[name] - 1].second;
  }
  RangeAgg& Track(uint32_t track) { return tracks_[track]; }

  static void Fold(RangeAgg* into, const RangeAgg& a);

 private:
  std::vector<uint32_t> slot_;  // name -> 1 + index in names_, 0 if none
  std::vector<std::pair<uint32_t, RangeAgg>> names_;
  absl::flat_hash_map<uint32_t, RangeAgg> tracks_;
};

// (ts, longer first, id): the order slices meet their parents in.
inline bool StatsOrder(const StatsRow& x, const StatsRow& y) {
  return x.ts != y.ts ? x.ts < y.ts : x.dur != y.dur ? x.dur > y.dur : x.id < y.id;
}

// Tallies `rows` (in StatsOrder). A lane's slices never overlap
// (format/lane_layout.h), so the slices open at a row are at most one per
// lane and its parent is found lane by lane downwards from its own.
void AddTrackRows(uint32_t track, const std::vector<StatsRow>& rows, int64_t a, int64_t b,
                  const absl::flat_hash_map<uint64_t, int64_t>& outside, StatsTally* tally);

}  // namespace tracetable

#endif  // TRACETABLE_QUERY_RANGE_STATS_EXACT_H_
