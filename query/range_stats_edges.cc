#include "query/range_stats_edges.h"

#include <algorithm>

namespace tracetable {

absl::Status ReadRestRows(const Table& t, uint32_t track, const std::vector<std::pair<int64_t, int64_t>>& spans,
                          const CoverSpan& cover, std::vector<TileRow>* scratch, std::vector<StatsRow>* out) {
  const proto::Track& info = t.resources().tracks(static_cast<int>(track));
  const size_t first = out->size();
  for (int c = 0; c < info.classes_size(); ++c) {
    const proto::ClassExtent& ext = info.classes(c);
    for (const auto& [from, to] : spans) {
      if (to < from || ext.count() == 0 || ext.max_end() < from || ext.min_ts() > to) continue;
      scratch->clear();
      // Rows starting up to the level's longest event before `from` may reach it.
      if (absl::Status s = t.ReadTiles(track, TileSection::kEvents, c, from - ext.max_dur(), to, scratch, nullptr);
          !s.ok()) {
        return s;
      }
      for (const TileRow& r : *scratch) {
        if (r.ts > to || r.ts + r.dur < from) continue;
        if (cover.any) {
          const BucketId own = OwningBucket(*cover.grid, r.ts, r.dur);
          if (BucketStart(*cover.grid, own) >= cover.lo && BucketEnd(*cover.grid, own) <= cover.hi) continue;
        }
        out->push_back({r.ts, r.dur, r.id, r.name, r.lane, r.kind});
      }
    }
  }
  // Spans share their end points and tiles: keep each event once. Equal ids
  // are equal rows, so sorting as AddTrackRows does makes them neighbours.
  std::sort(out->begin() + static_cast<std::ptrdiff_t>(first), out->end(), [](const StatsRow& x, const StatsRow& y) {
    return std::tie(x.ts, y.dur, x.id) < std::tie(y.ts, x.dur, y.id);
  });
  out->erase(std::unique(out->begin() + static_cast<std::ptrdiff_t>(first), out->end(),
                         [](const StatsRow& x, const StatsRow& y) { return x.id == y.id; }),
             out->end());
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> CountSamples(const Table& t, uint32_t track, int64_t from, int64_t to,
                                      std::vector<TileRow>* scratch) {
  if (to < from) return 0;
  const proto::Track& info = t.resources().tracks(static_cast<int>(track));
  uint64_t n = 0;
  for (int c = 0; c < info.classes_size(); ++c) {
    const proto::ClassExtent& ext = info.classes(c);
    if (ext.count() == 0 || ext.min_ts() > to || ext.max_end() < from) continue;
    scratch->clear();
    if (absl::Status s = t.ReadTiles(track, TileSection::kEvents, c, from, to, scratch, nullptr); !s.ok()) return s;
    for (const TileRow& r : *scratch) n += r.ts >= from && r.ts <= to;
  }
  return n;
}

}  // namespace tracetable
