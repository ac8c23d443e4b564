#include "store/stats_index_writer.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"

namespace tracetable {

StatsIndexWriter::StatsIndexWriter(uint32_t track, bool counter, StatsGrid grid, PutFn put)
    : track_(track), counter_(counter), grid_(grid), put_(std::move(put)), levels_(grid.levels) {}

absl::Status StatsIndexWriter::Add(const TileRow& row) {
  if (absl::Status s = EndSlicesBefore(row.ts); !s.ok()) return s;
  if (row.ts >= close_at_) {
    if (absl::Status s = CloseBucketsBefore(row.ts); !s.ok()) return s;
  }
  const BucketId bucket = OwningBucket(grid_, row.ts, counter_ ? 0 : row.dur);
  if (absl::Status s = OpenBucket(bucket); !s.ok()) return s;
  Level& level = levels_[bucket.level];
  if (counter_) {
    ++level.samples;
    return absl::OkStatus();
  }
  StatsNameRow& agg = level.names[row.name];
  agg.name = row.name;
  ++agg.count;
  if (row.kind != EventKind::kSlice) return absl::OkStatus();
  agg.min = agg.slices == 0 ? row.dur : std::min(agg.min, row.dur);
  agg.max = std::max(agg.max, row.dur);
  ++agg.slices;
  agg.total += row.dur;
  if (row.dur == 0) return absl::OkStatus();  // no children, no time taken from a parent
  const int64_t end = row.ts + row.dur;
  Open* parent = nullptr;
  for (Open& o : open_) {
    if (o.lane < row.lane && o.end >= end && (!parent || o.lane > parent->lane)) parent = &o;
  }
  if (parent) {
    parent->children += row.dur;
    // Buckets from this slice's up to (not with) the parent's hold the slice
    // but not the parent: there the parent is outside and loses this time.
    if (parent->bucket.level > bucket.level) {
      auto [it, inserted] = level.parents.try_emplace(parent->id, parent->bucket.level, 0);
      it->second.second += row.dur;
    }
  }
  open_.push_back({row.ts, end, row.dur, 0, row.id, row.lane, row.name, bucket});
  return absl::OkStatus();
}

// A slice's children all start before it ends, so once a row starts at or
// after its end its self time is known; its bucket is still open (it ends
// no earlier than the slice).
absl::Status StatsIndexWriter::EndSlicesBefore(int64_t ts) {
  for (size_t i = 0; i < open_.size();) {
    if (open_[i].end > ts) {
      ++i;
      continue;
    }
    const Open& s = open_[i];
    Level& level = levels_[s.bucket.level];
    if (level.index != static_cast<int64_t>(s.bucket.index)) {
      return absl::InternalError(absl::StrCat("stats index: track ", track_, " closed a bucket before its slice ended"));
    }
    level.names[s.name].self += std::max<int64_t>(0, s.dur - s.children);
    open_[i] = open_.back();
    open_.pop_back();
  }
  return absl::OkStatus();
}

absl::Status StatsIndexWriter::CloseBucketsBefore(int64_t ts) {
  for (uint32_t j = 0; j < grid_.levels; ++j) {
    const Level& level = levels_[j];
    if (level.index >= 0 && ts >= BucketEnd(grid_, {j, static_cast<uint64_t>(level.index)})) {
      if (absl::Status s = CloseBucket(j); !s.ok()) return s;
    }
  }
  close_at_ = std::numeric_limits<int64_t>::max();
  for (uint32_t j = 0; j < grid_.levels; ++j) {
    if (levels_[j].index >= 0) close_at_ = std::min(close_at_, BucketEnd(grid_, {j, static_cast<uint64_t>(levels_[j].index)}));
  }
  return absl::OkStatus();
}

absl::Status StatsIndexWriter::OpenBucket(BucketId b) {
  Level& level = levels_[b.level];
  if (level.index == static_cast<int64_t>(b.index)) return absl::OkStatus();
  if (level.index >= 0) {
    if (absl::Status s = CloseBucket(b.level); !s.ok()) return s;
  }
  level.index = static_cast<int64_t>(b.index);
  close_at_ = std::min(close_at_, BucketEnd(grid_, b));
  return absl::OkStatus();
}

absl::Status StatsIndexWriter::CloseBucket(uint32_t j) {
  Level& level = levels_[j];
  const BucketId b{j, static_cast<uint64_t>(level.index)};
  level.index = -1;
  if (level.names.empty() && level.samples == 0 && level.parents.empty()) return absl::OkStatus();
  StatsBucketData d;
  d.samples = level.samples;
  d.names.reserve(level.names.size());
  for (const auto& [name, row] : level.names) d.names.push_back(row);
  std::sort(d.names.begin(), d.names.end(), [](const StatsNameRow& x, const StatsNameRow& y) { return x.name < y.name; });
  for (const auto& [id, lt] : level.parents) d.parents.emplace_back(id, lt.second);
  std::sort(d.parents.begin(), d.parents.end());
  std::string value = EncodeStatsBucket(d);
  ++buckets_;
  bytes_ += value.size();
  if (absl::Status s = put_(StatsBucketKey(track_, b), std::move(value)); !s.ok()) return s;
  if (j + 1 < grid_.levels) {
    if (absl::Status s = OpenBucket({j + 1, b.index >> 1}); !s.ok()) return s;
    Level& up = levels_[j + 1];
    for (const StatsNameRow& row : d.names) Fold(&up.names[row.name], row);
    up.samples += level.samples;
    for (const auto& [id, lt] : level.parents) {
      if (lt.first <= j + 1) continue;  // the parent lies inside the bucket above
      auto [it, inserted] = up.parents.try_emplace(id, lt.first, 0);
      it->second.second += lt.second;
    }
  }
  level.names.clear();
  level.samples = 0;
  level.parents.clear();
  return absl::OkStatus();
}

void StatsIndexWriter::Fold(StatsNameRow* into, const StatsNameRow& row) {
  if (row.slices > 0) {
    into->min = into->slices == 0 ? row.min : std::min(into->min, row.min);
    into->max = std::max(into->max, row.max);
  }
  into->name = row.name;
  into->count += row.count;
  into->slices += row.slices;
  into->total += row.total;
  into->self += row.self;
}

absl::Status StatsIndexWriter::Finish() {
  if (absl::Status s = EndSlicesBefore(std::numeric_limits<int64_t>::max()); !s.ok()) return s;
  for (uint32_t j = 0; j < grid_.levels; ++j) {
    if (levels_[j].index >= 0) {
      if (absl::Status s = CloseBucket(j); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace tracetable
