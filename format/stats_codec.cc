#include "format/stats_codec.h"

#include <algorithm>
#include <bit>
#include <limits>

#include "absl/status/status.h"
#include "format/keys.h"
#include "format/tracetable.pb.h"

namespace tracetable {
namespace {

constexpr uint64_t kMaxTime = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

}  // namespace

uint32_t StatsBucketLog2(int64_t span, uint64_t events, uint64_t per_bucket) {
  // At least 1 ns (2^10 ps): finer buckets would only hold single events.
  const double want = static_cast<double>(std::max<int64_t>(span, 1)) * static_cast<double>(std::max<uint64_t>(per_bucket, 1)) /
                      static_cast<double>(std::max<uint64_t>(events, 1));
  uint32_t log2 = 10;
  while (log2 < 62 && static_cast<double>(uint64_t{1} << log2) < want) ++log2;
  return log2;
}

uint32_t StatsLevels(int64_t span, uint32_t log2) {
  return static_cast<uint32_t>(std::bit_width(static_cast<uint64_t>(std::max<int64_t>(span, 0)) >> log2)) + 1;
}

BucketId OwningBucket(const StatsGrid& g, int64_t ts, int64_t dur) {
  const uint64_t first = static_cast<uint64_t>(ts - g.min_ts);
  const uint64_t last = dur > 0 ? first + static_cast<uint64_t>(dur) - 1 : first;
  const uint32_t level = static_cast<uint32_t>(std::bit_width((first ^ last) >> g.log2));
  return {level, first >> (g.log2 + level)};
}

int64_t BucketStart(const StatsGrid& g, BucketId b) {
  return g.min_ts + static_cast<int64_t>(b.index << (g.log2 + b.level));
}

int64_t BucketEnd(const StatsGrid& g, BucketId b) {
  return g.min_ts + static_cast<int64_t>((b.index + 1) << (g.log2 + b.level));
}

std::vector<BucketId> CoverBuckets(const StatsGrid& g, int64_t a, int64_t b) {
  std::vector<BucketId> out;
  const int64_t ra = std::max<int64_t>(a - g.min_ts, 0);
  const int64_t rb = b - g.min_ts;
  if (rb <= ra) return out;
  const uint64_t width = uint64_t{1} << g.log2;
  uint64_t lo = (static_cast<uint64_t>(ra) + width - 1) >> g.log2;
  const uint64_t hi = std::min<uint64_t>(static_cast<uint64_t>(rb) >> g.log2, uint64_t{1} << (g.levels - 1));
  while (lo < hi) {
    uint32_t j = lo == 0 ? 63 : static_cast<uint32_t>(std::countr_zero(lo));
    j = std::min({j, static_cast<uint32_t>(std::bit_width(hi - lo) - 1), g.levels - 1});
    out.push_back({j, lo >> j});
    lo += uint64_t{1} << j;
  }
  return out;
}

std::string StatsBucketKey(uint32_t track, BucketId b) {
  std::string key(1, kStatsPrefix);
  PutBigEndian32(&key, track);
  key.push_back(static_cast<char>(b.level));
  PutBigEndian64(&key, b.index);
  return key;
}

std::string EncodeStatsBucket(const StatsBucketData& d) {
  proto::StatsBucket p;
  for (const StatsNameRow& r : d.names) {
    p.add_name(r.name);
    p.add_count(r.count);
    p.add_slices(r.slices);
    p.add_total(static_cast<uint64_t>(r.total));
    p.add_self(static_cast<uint64_t>(r.self));
    p.add_min(static_cast<uint64_t>(r.min));
    p.add_max(static_cast<uint64_t>(r.max));
  }
  p.set_samples(d.samples);
  for (const auto& [id, time] : d.parents) {
    p.add_parent_id(id);
    p.add_parent_time(static_cast<uint64_t>(time));
  }
  return p.SerializeAsString();
}

absl::StatusOr<StatsBucketData> DecodeStatsBucket(std::string_view value, uint64_t num_strings) {
  proto::StatsBucket p;
  StatsBucketData d;
  if (absl::Status s = DecodeStatsBucket(value, num_strings, &p, &d); !s.ok()) return s;
  return d;
}

absl::Status DecodeStatsBucket(std::string_view value, uint64_t num_strings, proto::StatsBucket* scratch,
                               StatsBucketData* out) {
  proto::StatsBucket& p = *scratch;
  p.Clear();
  out->names.clear();
  out->parents.clear();
  if (!p.ParseFromArray(value.data(), static_cast<int>(value.size()))) {
    return absl::DataLossError("stats bucket does not parse");
  }
  const int n = p.name_size();
  if (p.count_size() != n || p.slices_size() != n || p.total_size() != n || p.self_size() != n ||
      p.min_size() != n || p.max_size() != n || p.parent_id_size() != p.parent_time_size()) {
    return absl::DataLossError("stats bucket columns disagree");
  }
  out->samples = p.samples();
  out->names.reserve(n);
  for (int i = 0; i < n; ++i) {
    if ((i > 0 && p.name(i) <= p.name(i - 1)) || p.name(i) >= num_strings) {
      return absl::DataLossError("stats bucket names out of order or unknown");
    }
    if (p.slices(i) > p.count(i) || p.total(i) > kMaxTime || p.self(i) > p.total(i) || p.min(i) > p.max(i) ||
        p.max(i) > p.total(i)) {
      return absl::DataLossError("stats bucket holds impossible values");
    }
    out->names.push_back({p.name(i), p.count(i), p.slices(i), static_cast<int64_t>(p.total(i)),
                          static_cast<int64_t>(p.self(i)), static_cast<int64_t>(p.min(i)),
                          static_cast<int64_t>(p.max(i))});
  }
  for (int i = 0; i < p.parent_id_size(); ++i) {
    if (p.parent_time(i) > kMaxTime) return absl::DataLossError("stats bucket holds impossible values");
    out->parents.emplace_back(p.parent_id(i), static_cast<int64_t>(p.parent_time(i)));
  }
  return absl::OkStatus();
}

}  // namespace tracetable
