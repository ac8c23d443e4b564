#include "query/range_stats_index.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "format/stats_codec.h"
#include "query/range_stats_exact.h"
#include "query/window.h"
#include "store/corruption.h"

namespace tracetable {
namespace {

using Outside = absl::flat_hash_map<uint32_t, absl::flat_hash_map<uint64_t, int64_t>>;  // track -> parent id -> ps

bool IsCounter(const Table& t, uint32_t track) {
  return t.resources().tracks(static_cast<int>(track)).kind() == proto::Track::COUNTER;
}

absl::Status ReadAggregates(const Table& t, const StatsGrid& g, uint32_t track, const std::vector<BucketId>& cover,
                            StatsTally* tally, Outside* outside) {
  const bool counter = IsCounter(t, track);
  RangeAgg sum;
  std::string value;
  for (const BucketId& b : cover) {
    absl::Status s = t.Get(StatsBucketKey(track, b), &value);
    if (absl::IsNotFound(s)) continue;
    if (!s.ok()) return s;
    absl::StatusOr<StatsBucketData> d = DecodeStatsBucket(value, t.num_strings());
    if (!d.ok()) return CorruptTable(t.path(), absl::StrCat("track ", track, ": ", d.status().message()));
    if (counter ? !d->names.empty() : d->samples != 0) {
      return CorruptTable(t.path(), absl::StrCat("track ", track, ": stats bucket of the wrong kind"));
    }
    sum.count += d->samples;
    for (const StatsNameRow& r : d->names) {
      const RangeAgg a{r.count, r.slices, r.total, r.self, r.min, r.max};
      tally->AddName(r.name, a);
      sum.count += a.count;
      sum.slices += a.slices;
      sum.total += a.total;
      sum.self += a.self;
    }
    for (const auto& [id, time] : d->parents) (*outside)[track][id] += time;
  }
  if (sum.count > 0) tally->AddTrack(track, sum);
  return absl::OkStatus();
}

// The points and pieces of [a, b] whose windows hold every event lying in
// no cover bucket: the edges outside the cover and each boundary inside it.
std::vector<std::pair<int64_t, int64_t>> RestSpans(const StatsGrid& g, const std::vector<BucketId>& cover, int64_t a,
                                                   int64_t b) {
  if (cover.empty()) return {{a, b}};
  std::vector<std::pair<int64_t, int64_t>> spans;
  spans.emplace_back(a, BucketStart(g, cover.front()));
  for (size_t i = 0; i + 1 < cover.size(); ++i) spans.emplace_back(BucketEnd(g, cover[i]), BucketEnd(g, cover[i]));
  spans.emplace_back(BucketEnd(g, cover.back()), b);
  return spans;
}

int64_t FirstSample(const proto::Track& tr) {
  int64_t first = INT64_MAX;
  for (const proto::ClassExtent& e : tr.classes()) {
    if (e.count() > 0) first = std::min(first, e.min_ts());
  }
  return first;
}

}  // namespace

absl::StatusOr<RangeStats> RangeStatsFromIndex(const Table& t, const std::vector<uint32_t>& tracks, int64_t a,
                                               int64_t b) {
  const proto::StatsIndexInfo& info = t.meta().stats_index();
  const StatsGrid g{t.meta().min_ts(), info.bucket_log2(), info.levels()};
  std::vector<uint32_t> slices_tracks, counter_tracks;
  for (int i = 0, n = tracks.empty() ? t.resources().tracks_size() : static_cast<int>(tracks.size()); i < n; ++i) {
    const uint32_t track = tracks.empty() ? static_cast<uint32_t>(i) : tracks[i];
    (IsCounter(t, track) ? counter_tracks : slices_tracks).push_back(track);
  }
  RangeStats out;
  out.covered_to = b;
  if (b < a) return out;
  // No event ends past max_end (or starts before min_ts): a range reaching
  // past the span holds the buckets sticking out of it wholly, so the whole
  // span is one top bucket.
  const BucketId top{g.levels - 1, 0};
  const std::vector<BucketId> cover =
      CoverBuckets(g, a <= g.min_ts ? g.min_ts : a, b >= t.meta().max_end() ? BucketEnd(g, top) : b);
  const int64_t lo = cover.empty() ? b : BucketStart(g, cover.front());
  const int64_t hi = cover.empty() ? b : BucketEnd(g, cover.back());
  StatsTally tally;
  Outside outside;
  for (uint32_t track : slices_tracks) {
    if (absl::Status s = ReadAggregates(t, g, track, cover, &tally, &outside); !s.ok()) return s;
  }
  for (uint32_t track : counter_tracks) {
    if (absl::Status s = ReadAggregates(t, g, track, cover, &tally, &outside); !s.ok()) return s;
  }
  // Events in no cover bucket, each once (windows overlap at their ends).
  absl::flat_hash_map<uint32_t, std::vector<TileRow>> rest;
  for (const auto& [from, to] : RestSpans(g, cover, a, b)) {
    if (slices_tracks.empty()) break;
    if (to < from) continue;  // the cover reaches past b
    WindowRequest req;
    req.start = from;
    req.end = to;
    req.tracks = slices_tracks;
    absl::StatusOr<WindowResult> w = QueryWindow(t, req);
    if (!w.ok()) return w.status();
    out.events += w->items.size();
    for (const WindowItem& it : w->items) {
      if (it.summary) return absl::InternalError("a resolution-0 window returned a summary");
      if (!cover.empty()) {
        const BucketId own = OwningBucket(g, it.row.ts, it.row.dur);
        if (BucketStart(g, own) >= lo && BucketEnd(g, own) <= hi) continue;
      }
      rest[it.track].push_back(it.row);
    }
  }
  static const absl::flat_hash_map<uint64_t, int64_t> kNone;
  for (auto& [track, rows] : rest) {
    std::sort(rows.begin(), rows.end(), [](const TileRow& x, const TileRow& y) { return x.id < y.id; });
    rows.erase(std::unique(rows.begin(), rows.end(), [](const TileRow& x, const TileRow& y) { return x.id == y.id; }),
               rows.end());
    auto it = outside.find(track);
    AddTrackRows(track, rows, a, b, it == outside.end() ? kNone : it->second, &tally);
  }
  // Counter samples: those in [a, b] and the one before a, whose value
  // holds at a (the window's carried sample).
  absl::flat_hash_map<uint32_t, RangeAgg> samples;
  for (uint32_t track : counter_tracks) {
    if (FirstSample(t.resources().tracks(static_cast<int>(track))) < a) samples[track].count = 1;
  }
  for (const auto& [from, to] : std::vector<std::pair<int64_t, int64_t>>{{a, lo - 1}, {hi, b}}) {
    if (to < from || counter_tracks.empty()) continue;
    WindowRequest req;
    req.start = from;
    req.end = to;
    req.tracks = counter_tracks;
    absl::StatusOr<WindowResult> w = QueryWindow(t, req);
    if (!w.ok()) return w.status();
    out.events += w->items.size();
    for (const WindowItem& it : w->items) {
      if (it.row.ts >= from && it.row.ts <= to) ++samples[it.track].count;
    }
  }
  for (const auto& [track, n] : samples) tally.AddTrack(track, n);
  tally.MoveInto(&out);
  return out;
}

}  // namespace tracetable
