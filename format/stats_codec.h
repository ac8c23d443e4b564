// Range statistics aggregates (keys "B", docs/format.md "Range statistics"):
// the dyadic bucket grid they live on, their keys, and decoding a bucket with
// every column checked.
//
// Contract: level-0 buckets are 2^log2 ps wide, aligned at the table's
// min_ts; a level-j bucket is 2^j level-0 buckets. An event [ts, ts + dur]
// (a point when dur = 0) belongs to every bucket [s, e) with s <= ts and
// ts + dur <= e (and ts < e); OwningBucket is the smallest of them, and a
// bucket's aggregates cover every event belonging to it, so the buckets
// CoverBuckets returns for [a, b) hold exactly the events lying wholly
// inside one of them. A bucket that fails to decode or check is damage,
// never zero.
#ifndef TRACETABLE_FORMAT_STATS_CODEC_H_
#define TRACETABLE_FORMAT_STATS_CODEC_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "format/tracetable.pb.h"

namespace tracetable {

constexpr char kStatsPrefix = 'B';

struct StatsGrid {
  int64_t min_ts = 0;  // relative ps: the grid's origin
  uint32_t log2 = 0;   // level-0 bucket width is 2^log2 ps
  uint32_t levels = 1;
};

struct BucketId {
  uint32_t level = 0;
  uint64_t index = 0;  // bucket start = min_ts + index << (log2 + level)
  bool operator==(const BucketId&) const = default;
};

// The bucket width (log2) that puts about `per_bucket` of `events` spread
// over `span` ps into each level-0 bucket, and the levels that reach the span.
uint32_t StatsBucketLog2(int64_t span, uint64_t events, uint64_t per_bucket);
uint32_t StatsLevels(int64_t span, uint32_t log2);

BucketId OwningBucket(const StatsGrid& g, int64_t ts, int64_t dur);
int64_t BucketStart(const StatsGrid& g, BucketId b);
int64_t BucketEnd(const StatsGrid& g, BucketId b);  // exclusive
// The maximal buckets inside [a, b) (relative ps), in time order: at most
// two per level.
std::vector<BucketId> CoverBuckets(const StatsGrid& g, int64_t a, int64_t b);

// "B" + track (u32 BE) + level (u8) + index (u64 BE): 14 bytes, so a track's
// buckets are contiguous, level by level, in time order.
std::string StatsBucketKey(uint32_t track, BucketId b);

struct StatsNameRow {
  uint32_t name = 0;
  uint64_t count = 0;
  uint64_t slices = 0;
  int64_t total = 0;
  int64_t self = 0;
  int64_t min = 0;
  int64_t max = 0;
};

struct StatsBucketData {
  std::vector<StatsNameRow> names;                    // names ascending
  uint64_t samples = 0;                               // counter samples
  std::vector<std::pair<uint64_t, int64_t>> parents;  // parent event id -> time its children take
};

std::string EncodeStatsBucket(const StatsBucketData& d);
// Fails (with what is wrong) when the value does not parse, its columns
// disagree, names are not ascending or below num_strings, or a value is
// impossible (slices > count, self > total, min > max, times past int64).
absl::StatusOr<StatsBucketData> DecodeStatsBucket(std::string_view value, uint64_t num_strings);
// The same into `out`, reusing its and `scratch`'s memory: a query decoding
// many records grows its buffers once.
absl::Status DecodeStatsBucket(std::string_view value, uint64_t num_strings, proto::StatsBucket* scratch,
                               StatsBucketData* out);

}  // namespace tracetable

#endif  // TRACETABLE_FORMAT_STATS_CODEC_H_
