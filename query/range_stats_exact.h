// Exact range statistics from events read one by one: the part of
// query/range_stats.h that both the path over every event of the range and
// the path over bucket aggregates (query/range_stats_index.h) share, so the
// two give the same answer by construction.
//
// Contract: AddTrackRows takes rows of one non-counter track that include,
// with every slice among them, every slice containing it (a container
// overlaps whatever its contents overlap, so any set of "all events
// overlapping X" qualifies). Each row counts once toward its name and
// track; a slice adds its part inside [a, b] to total, min and max, and its
// self time: that part minus its children's parts, minus `outside` time of
// its children not among the rows (keyed by the slice's event id), at
// least 0. A slice's parent is the slice containing it with the greatest
// lane below its own among those before it in (ts, longer first, id)
// order — the order the ingest saw them in (store/stats_index_writer.h).
#ifndef TRACETABLE_QUERY_RANGE_STATS_EXACT_H_
#define TRACETABLE_QUERY_RANGE_STATS_EXACT_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "format/tile_codec.h"
#include "query/range_stats.h"

namespace tracetable {

struct StatsTally {
  absl::flat_hash_map<uint32_t, RangeAgg> names, tracks;

  // Folds a whole aggregate (from a bucket, or counted elsewhere) in.
  void AddName(uint32_t name, const RangeAgg& a);
  void AddTrack(uint32_t track, const RangeAgg& a);
  // Sorted as RangeStats wants them.
  void MoveInto(RangeStats* out);
};

void AddTrackRows(uint32_t track, std::vector<TileRow>& rows, int64_t a, int64_t b,
                  const absl::flat_hash_map<uint64_t, int64_t>& outside, StatsTally* tally);

}  // namespace tracetable

#endif  // TRACETABLE_QUERY_RANGE_STATS_EXACT_H_
