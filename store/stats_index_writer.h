// Range statistics aggregates of one track, written as the track's events
// go by (format/stats_codec.h, docs/format.md "Range statistics").
//
// Contract: fed a track's rows in TrackTimeLess order with their lanes,
// Finish() has written, for every bucket of the grid holding an event of
// the track, per name the count, slices, total, self, min and max of the
// events lying wholly inside it (counter tracks: the samples), and per
// parent lying partly outside the bucket the time its children inside take.
// A slice's parent is the slice containing it ([ts, end] within the
// parent's) with the greatest lane below its own among those before it in
// TrackTimeLess order; its self time is its duration minus its children's
// durations, at least 0. Each event is added once, at its owning bucket;
// a closing bucket folds into its parent, so a track costs O(events + buckets).
#ifndef TRACETABLE_STORE_STATS_INDEX_WRITER_H_
#define TRACETABLE_STORE_STATS_INDEX_WRITER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "format/stats_codec.h"
#include "format/tile_codec.h"

namespace tracetable {

class StatsIndexWriter {
 public:
  using PutFn = std::function<absl::Status(std::string key, std::string value)>;

  StatsIndexWriter(uint32_t track, bool counter, StatsGrid grid, PutFn put);

  absl::Status Add(const TileRow& row);
  absl::Status Finish();

  uint64_t buckets() const { return buckets_; }
  uint64_t bytes() const { return bytes_; }

 private:
  struct Open {  // a slice whose end is not reached yet
    int64_t ts, end, dur, children;
    uint64_t id;
    uint32_t lane, name;
    BucketId bucket;
  };
  struct Level {
    int64_t index = -1;  // the open bucket, -1 if none
    absl::flat_hash_map<uint32_t, StatsNameRow> names;
    uint64_t samples = 0;
    // parent id -> (parent's owning level, children's time)
    absl::flat_hash_map<uint64_t, std::pair<uint32_t, int64_t>> parents;
  };

  absl::Status EndSlicesBefore(int64_t ts);
  absl::Status CloseBucketsBefore(int64_t ts);
  absl::Status OpenBucket(BucketId b);
  absl::Status CloseBucket(uint32_t level);
  static void Fold(StatsNameRow* into, const StatsNameRow& row);

  uint32_t track_;
  bool counter_;
  StatsGrid grid_;
  PutFn put_;
  std::vector<Level> levels_;
  std::vector<Open> open_;
  int64_t close_at_ = INT64_MAX;  // earliest end of an open bucket
  uint64_t buckets_ = 0, bytes_ = 0;
};

}  // namespace tracetable

#endif  // TRACETABLE_STORE_STATS_INDEX_WRITER_H_
