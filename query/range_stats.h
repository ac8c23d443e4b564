// Statistics of a time range (Perfetto's area selection): per name and per
// track, the count of events, total and self time, and per name the
// shortest, longest (and so average) slice, all clipped to the range.
//
// Contract (tests/query/range_stats_test.cc, against a brute force):
//  - the events are those of the resolution-0 window over [start, end] on
//    `tracks` (every track when empty); counter samples count toward their
//    track only; instants and flow points count but have no duration;
//  - a slice's time is its part inside the range; its self time is that
//    minus the parts of its direct children inside the range, at least 0.
//    A slice's parent is the slice containing it ([ts, ts + dur] within
//    the parent's) with the greatest lane below its own among those before
//    it in (ts, longer first, id) order: for properly nested slices the
//    enclosing one a level up; a slice overlapping another's end is not its
//    child (query/range_stats_exact.h);
//  - min/max are over slices only (`slices` of them); with no slice they are 0;
//  - a table with range aggregates (TableMeta.stats_index, written at
//    ingest) answers exactly from them and a few event reads, whatever the
//    range (query/range_stats_index.h): `cap` is not used and the answer is
//    never truncated;
//  - a run of shards (store/run_table.h) answers each shard's tracks from
//    that shard's aggregates when it has them and the rest from their
//    events, as below (query/run_range_stats.h);
//  - an older table reads the range's events: at most `cap` of them; past
//    it (or when the range clearly holds many more) only a first part is
//    counted, `truncated` is set and `covered_to` says up to where — a
//    partial answer never passes for a whole one.
#ifndef TRACETABLE_QUERY_RANGE_STATS_H_
#define TRACETABLE_QUERY_RANGE_STATS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "store/table.h"

namespace tracetable {

struct RangeAgg {
  uint64_t count = 0;   // events (slices, instants, flow points; counter samples per track)
  uint64_t slices = 0;  // of which slices
  int64_t total = 0;    // ps, clipped to the range
  int64_t self = 0;     // ps
  int64_t min = 0;      // ps, shortest clipped slice
  int64_t max = 0;      // ps, longest clipped slice
};

struct RangeStats {
  std::vector<std::pair<uint32_t, RangeAgg>> names;   // by name id; self time descending, then id
  std::vector<std::pair<uint32_t, RangeAgg>> tracks;  // by track id; total descending, then id
  uint64_t events = 0;                                // events read one by one
  bool truncated = false;
  int64_t covered_to = 0;                             // relative ps
};

absl::StatusOr<RangeStats> ComputeRangeStats(const Table& t, const std::vector<uint32_t>& tracks,
                                             int64_t start, int64_t end, uint64_t cap);

// The path over the range's events alone (at most `cap` of them), whatever
// aggregates `t` has: what a table without them answers.
absl::StatusOr<RangeStats> RangeStatsFromEvents(const Table& t, const std::vector<uint32_t>& tracks,
                                                int64_t start, int64_t end, uint64_t cap);

}  // namespace tracetable

#endif  // TRACETABLE_QUERY_RANGE_STATS_H_
