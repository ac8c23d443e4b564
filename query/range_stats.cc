#include "query/range_stats.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "query/estimate.h"
#include "query/window.h"

namespace tracetable {

absl::StatusOr<RangeStats> ComputeRangeStats(const Table& t, const std::vector<uint32_t>& tracks,
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
  // Self time: items are sorted by (track, ts, lane); a stack of open
  // slices gives each slice's parent (the nearest enclosing shallower one).
  std::vector<int64_t> self(items.size(), 0), clipped(items.size(), 0);
  struct Open {
    size_t index;
    int64_t end;
    uint32_t lane;
  };
  std::vector<Open> stack;
  uint32_t current_track = UINT32_MAX;
  for (size_t i = 0; i < items.size(); ++i) {
    const WindowItem& it = items[i];
    if (it.track != current_track) {
      stack.clear();
      current_track = it.track;
    }
    if (it.summary || it.row.kind != EventKind::kSlice) continue;
    const int64_t a = std::max(it.row.ts, start);
    const int64_t b = std::min(it.row.ts + it.row.dur, out.covered_to);
    clipped[i] = self[i] = std::max<int64_t>(0, b - a);
    while (!stack.empty() && (stack.back().end <= it.row.ts || stack.back().lane >= it.row.lane)) {
      stack.pop_back();
    }
    if (!stack.empty()) {
      const size_t pi = stack.back().index;
      const int64_t pa = std::max(items[pi].row.ts, start);
      const int64_t pb = std::min(items[pi].row.ts + items[pi].row.dur, out.covered_to);
      const int64_t ov = std::min(b, pb) - std::max(a, pa);
      if (ov > 0) self[pi] -= ov;
    }
    stack.push_back({i, it.row.ts + it.row.dur, it.row.lane});
  }
  absl::flat_hash_map<uint32_t, RangeAgg> by_track, by_name;
  for (size_t i = 0; i < items.size(); ++i) {
    const WindowItem& it = items[i];
    RangeAgg& ta = by_track[it.track];
    ta.count += it.row.count;
    if (t.resources().tracks(it.track).kind() == proto::Track::COUNTER) continue;
    RangeAgg& na = by_name[it.row.name];
    na.count += it.row.count;
    const int64_t s = std::max<int64_t>(0, self[i]);
    ta.total += clipped[i];
    ta.self += s;
    na.total += clipped[i];
    na.self += s;
    if (it.row.kind == EventKind::kSlice) {
      na.min = na.slices == 0 ? clipped[i] : std::min(na.min, clipped[i]);
      na.max = std::max(na.max, clipped[i]);
      ++na.slices;
      ++ta.slices;
    }
  }
  out.tracks.assign(by_track.begin(), by_track.end());
  std::sort(out.tracks.begin(), out.tracks.end(), [](const auto& x, const auto& y) {
    return x.second.total != y.second.total ? x.second.total > y.second.total : x.first < y.first;
  });
  out.names.assign(by_name.begin(), by_name.end());
  std::sort(out.names.begin(), out.names.end(), [](const auto& x, const auto& y) {
    return x.second.self != y.second.self ? x.second.self > y.second.self : x.first < y.first;
  });
  return out;
}

}  // namespace tracetable
