#include "query/range_stats_edges.h"

#include <algorithm>

namespace tracetable {

namespace {

// Merges the sorted runs [runs[i], runs[i + 1]) of `rows` (from `first`)
// pairwise until one is left, through `tmp`: O(n log runs) and no
// allocation once the buffers are grown, where sorting all is O(n log n).
void MergeRuns(std::vector<StatsRow>* rows, size_t first, std::vector<size_t> runs, std::vector<StatsRow>* tmp) {
  auto at = [](std::vector<StatsRow>* v, size_t i) { return v->begin() + static_cast<std::ptrdiff_t>(i); };
  while (runs.size() > 2) {
    tmp->resize(rows->size());
    std::vector<size_t> merged;
    for (size_t i = 0; i + 1 < runs.size(); i += 2) {
      merged.push_back(runs[i]);
      if (i + 2 < runs.size()) {
        std::merge(at(rows, runs[i]), at(rows, runs[i + 1]), at(rows, runs[i + 1]), at(rows, runs[i + 2]),
                   at(tmp, runs[i]), StatsOrder);
      } else {
        std::copy(at(rows, runs[i]), at(rows, runs[i + 1]), at(tmp, runs[i]));
      }
    }
    if (merged.back() != runs.back()) merged.push_back(runs.back());
    runs = std::move(merged);
    std::copy(at(tmp, first), tmp->end(), at(rows, first));
  }
}

// The time that holds about `rows` rows of a storage level, at its average
// density (at least 1 ps).
int64_t ChunkLength(const proto::ClassExtent& ext, uint64_t rows) {
  const double span = static_cast<double>(std::max<int64_t>(ext.max_end() - ext.min_ts(), 1));
  const double len = span * static_cast<double>(rows) / static_cast<double>(std::max<uint64_t>(ext.count(), 1));
  return len >= 4e18 ? INT64_MAX / 4 : std::max<int64_t>(1, static_cast<int64_t>(len));
}

}  // namespace

absl::Status ReadRestRows(const Table& t, uint32_t track, const std::vector<std::pair<int64_t, int64_t>>& spans,
                          const CoverSpan& cover, std::vector<TileRow>* scratch, std::vector<StatsRow>* merge_tmp,
                          std::vector<StatsRow>* out, uint64_t chunk_rows) {
  const proto::Track& info = t.resources().tracks(static_cast<int>(track));
  const size_t first = out->size();
  std::vector<size_t> runs = {first};
  for (int c = 0; c < info.classes_size(); ++c) {
    const proto::ClassExtent& ext = info.classes(c);
    for (const auto& [from, to] : spans) {
      if (to < from || ext.count() == 0 || ext.max_end() < from || ext.min_ts() > to) continue;
      const size_t run = out->size();
      // Rows starting up to the level's longest event before `from` may
      // reach it. Read in pieces of about `chunk_rows` rows, each keeping the
      // rows that start in it, so `scratch` stays small and in cache.
      const int64_t lower = std::max(from - ext.max_dur(), ext.min_ts());
      const int64_t upper = std::min(to, ext.max_end());
      const int64_t chunk = ChunkLength(ext, chunk_rows);
      for (int64_t lo = lower; lo <= upper;) {
        const int64_t hi = upper - lo < chunk ? upper : lo + chunk - 1;
        scratch->clear();
        if (absl::Status s = t.ReadTiles(track, TileSection::kEvents, c, lo, hi, scratch, nullptr); !s.ok()) {
          return s;
        }
        for (const TileRow& r : *scratch) {
          if (r.ts < lo || r.ts > hi || r.ts + r.dur < from) continue;
          if (cover.any) {
            const BucketId own = OwningBucket(*cover.grid, r.ts, r.dur);
            if (BucketStart(*cover.grid, own) >= cover.lo && BucketEnd(*cover.grid, own) <= cover.hi) continue;
          }
          out->push_back({r.ts, r.dur, r.id, r.name, r.lane, r.kind});
        }
        if (hi == upper) break;
        lo = hi + 1;
      }
      if (out->size() == run) continue;
      // A level's tiles hold its rows in start order; ties are cheap to fix.
      if (!std::is_sorted(out->begin() + static_cast<std::ptrdiff_t>(run), out->end(), StatsOrder)) {
        std::sort(out->begin() + static_cast<std::ptrdiff_t>(run), out->end(), StatsOrder);
      }
      runs.push_back(out->size());
    }
  }
  MergeRuns(out, first, std::move(runs), merge_tmp);
  // Spans share their end points and tiles: keep each event once. Equal ids
  // are equal rows, so in StatsOrder they are neighbours.
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
