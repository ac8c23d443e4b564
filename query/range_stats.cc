#include "query/range_stats.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "query/estimate.h"
#include "query/range_stats_exact.h"
#include "query/range_stats_index.h"
#include "query/run_range_stats.h"
#include "query/window.h"

namespace tracetable {

absl::StatusOr<RangeStats> ComputeRangeStats(const Table& t, const std::vector<uint32_t>& tracks,
                                             int64_t start, int64_t end, uint64_t cap) {
  if (t.meta().has_stats_index()) return RangeStatsFromIndex(t, tracks, start, end);
  if (t.run() != nullptr) return RunRangeStats(t, tracks, start, end, cap);
  return RangeStatsFromEvents(t, tracks, start, end, cap);
}

absl::StatusOr<RangeStats> RangeStatsFromEvents(const Table& t, const std::vector<uint32_t>& tracks,
                                                int64_t start, int64_t end, uint64_t cap) {
  WindowRequest req;
  req.start = start;
  req.end = end;
  req.resolution = 0;
  req.tracks = tracks;
  req.limit = cap;
  std::vector<uint32_t> all;
  if (tracks.empty()) {
    for (int i = 0; i < t.resources().tracks_size(); ++i) all.push_back(static_cast<uint32_t>(i));
  }
  const double est = EstimateEvents(t, tracks.empty() ? all : tracks, start, end);
  if (est > 8.0 * static_cast<double>(cap)) {
    // Reading the whole range would take long and the cap would cut it
    // anyway: read only its first part.
    req.end = start + static_cast<int64_t>(static_cast<double>(end - start) * (2.0 * static_cast<double>(cap) / est));
  }
  absl::StatusOr<WindowResult> res = QueryWindow(t, req);
  if (!res.ok()) return res.status();
  const std::vector<WindowItem>& items = res->items;
  RangeStats out;
  out.events = items.size();
  out.truncated = res->truncated || req.end < end;
  out.covered_to = end;  // with truncation, where the data stops
  if (res->truncated && !items.empty()) {
    out.covered_to = start;
    for (const WindowItem& it : items) out.covered_to = std::max(out.covered_to, it.row.ts);
  } else if (req.end < end) {
    out.covered_to = req.end;
  }
  // Items are sorted by track: hand each track's rows over at once.
  StatsTally tally(t.num_strings());
  const absl::flat_hash_map<uint64_t, int64_t> none;
  std::vector<StatsRow> rows;
  for (size_t i = 0; i < items.size();) {
    const uint32_t track = items[i].track;
    const bool counter = t.resources().tracks(static_cast<int>(track)).kind() == proto::Track::COUNTER;
    rows.clear();
    RangeAgg samples;
    for (; i < items.size() && items[i].track == track; ++i) {
      if (counter) {
        samples.count += items[i].row.count;
      } else {
        const TileRow& r = items[i].row;
        rows.push_back({r.ts, r.dur, r.id, r.name, r.lane, r.kind});
      }
    }
    if (counter) {
      tally.AddTrack(track, samples);
    } else {
      std::sort(rows.begin(), rows.end(), StatsOrder);
      AddTrackRows(track, rows, start, out.covered_to, none, &tally);
    }
  }
  tally.MoveInto(&out);
  return out;
}

}  // namespace tracetable
