// The events of one track that bucket aggregates do not answer for
// (query/range_stats_index.h), read straight from the track's event tiles.
//
// Contract: ReadRestRows appends to `out`, once each, the events of a
// non-counter track overlapping one of `spans` (closed, relative ps) whose
// owning bucket (format/stats_codec.h) does not lie within [lo, hi) — the
// events of the range's edge pieces and those crossing a boundary between
// cover buckets; with every slice, every slice containing it (it overlaps
// the same span). CountSamples counts the samples of a counter track with
// ts in [from, to]. Both read every storage level the window at resolution
// 0 reads (query/window.cc), so they see exactly its events, but keep only
// what statistics need (StatsRow) and nothing per event is allocated.
// `scratch` and `merge_tmp` are buffers reused between calls. Each storage
// level is read in time pieces of about `chunk_rows` rows (the answer does
// not depend on it; tests make it small to cross many piece edges).
#ifndef TRACETABLE_QUERY_RANGE_STATS_EDGES_H_
#define TRACETABLE_QUERY_RANGE_STATS_EDGES_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "format/stats_codec.h"
#include "format/tile_codec.h"
#include "query/range_stats_exact.h"
#include "store/table.h"

namespace tracetable {

struct CoverSpan {
  const StatsGrid* grid = nullptr;
  bool any = false;     // false: no cover bucket, every event is rest
  int64_t lo = 0, hi = 0;  // the cover buckets' union [lo, hi)
};

absl::Status ReadRestRows(const Table& t, uint32_t track, const std::vector<std::pair<int64_t, int64_t>>& spans,
                          const CoverSpan& cover, std::vector<TileRow>* scratch, std::vector<StatsRow>* merge_tmp,
                          std::vector<StatsRow>* out, uint64_t chunk_rows = 8192);

absl::StatusOr<uint64_t> CountSamples(const Table& t, uint32_t track, int64_t from, int64_t to,
                                      std::vector<TileRow>* scratch);

}  // namespace tracetable

#endif  // TRACETABLE_QUERY_RANGE_STATS_EDGES_H_
