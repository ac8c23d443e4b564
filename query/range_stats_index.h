// Range statistics from the aggregates written at ingest (keys "B",
// format/stats_codec.h), for tables that have them (TableMeta.stats_index).
//
// Contract: the same answer as the path over every event (query/range_stats.h,
// query/range_stats_exact.h), never truncated. The range [a, b] splits into
// the maximal grid buckets inside it (at most two per level), whose
// aggregates hold exactly the events lying wholly inside one of them, and
// the rest: events overlapping the range that lie in no such bucket. Those
// overlap the two edge pieces or straddle a boundary between the buckets,
// so windows over the edges and over each boundary point find them all
// (with every slice containing one of them); they are counted one by one,
// and a parent among them loses the time of its children inside the buckets
// as the buckets record it. Cost: two level-0 buckets of events, the events
// crossing O(levels) points, and O(levels) aggregate reads per track.
#ifndef TRACETABLE_QUERY_RANGE_STATS_INDEX_H_
#define TRACETABLE_QUERY_RANGE_STATS_INDEX_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "query/range_stats.h"
#include "store/table.h"

namespace tracetable {

// Requires t.meta().has_stats_index(). `tracks` empty = every track.
absl::StatusOr<RangeStats> RangeStatsFromIndex(const Table& t, const std::vector<uint32_t>& tracks, int64_t a,
                                               int64_t b);

}  // namespace tracetable

#endif  // TRACETABLE_QUERY_RANGE_STATS_INDEX_H_
