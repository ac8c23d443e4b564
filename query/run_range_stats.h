// Range statistics over a run of shards (store/run_table.h), from each
// shard's own range aggregates (query/range_stats_index.h) where it has them.
//
// Contract: the answer one table of the shards' inputs gives
// (query/range_stats.h; tests/runs/run_stats_test.cc). Every track lives in
// one shard and every statistic is a sum (or a min/max) over tracks, with a
// slice's parent on its own track, so the run's answer is each shard's
// answer for its own tracks, asked in the shard's numbers and times, with
// names and tracks mapped to the run's and folded together.
//
// A shard answers from its aggregates when it has them (`--stats-bucket-
// events` at its ingest) and its events are the ones the run reads: not a
// shard holding begins kept without an end that ends before the run does
// (in its aggregates they last to its own end, in the run to the run's
// end), nor one that did not open. Those shards' tracks are counted from the
// run's events (RangeStatsFromEvents, at most `cap`); when that part is
// truncated the whole answer is, and the shards answering from aggregates
// are asked only up to its `covered_to`, so no part counts past where the
// answer says it stops. A shard that fails is an error naming its host.
#ifndef TRACETABLE_QUERY_RUN_RANGE_STATS_H_
#define TRACETABLE_QUERY_RUN_RANGE_STATS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "query/range_stats.h"
#include "store/table.h"

namespace tracetable {

// `t` must be a run (t.run() != nullptr); `tracks` empty = every track.
absl::StatusOr<RangeStats> RunRangeStats(const Table& t, const std::vector<uint32_t>& tracks, int64_t start,
                                         int64_t end, uint64_t cap);

// Whether every shard holding one of `tracks` (empty: any) answers from its
// aggregates, so RunRangeStats reads no range's events whole and is never
// truncated. From the run's metadata: no shard is opened.
bool RunAnswersFromAggregates(const Table& t, const std::vector<uint32_t>& tracks);

}  // namespace tracetable

#endif  // TRACETABLE_QUERY_RUN_RANGE_STATS_H_
