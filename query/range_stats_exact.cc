#include "query/range_stats_exact.h"

#include <algorithm>
#include <tuple>

namespace tracetable {

void StatsTally::Fold(RangeAgg* into, const RangeAgg& a) {
  if (a.slices > 0) {
    into->min = into->slices == 0 ? a.min : std::min(into->min, a.min);
    into->max = std::max(into->max, a.max);
  }
  into->count += a.count;
  into->slices += a.slices;
  into->total += a.total;
  into->self += a.self;
}

void StatsTally::AddTrack(uint32_t track, const RangeAgg& a) {
  RangeAgg& t = tracks_[track];
  t.count += a.count;
  t.slices += a.slices;
  t.total += a.total;
  t.self += a.self;
}

void StatsTally::Merge(const StatsTally& other) {
  for (const auto& [name, a] : other.names_) AddName(name, a);
  for (const auto& [track, a] : other.tracks_) AddTrack(track, a);
}

void StatsTally::MoveInto(RangeStats* out) {
  out->tracks.assign(tracks_.begin(), tracks_.end());
  std::sort(out->tracks.begin(), out->tracks.end(), [](const auto& x, const auto& y) {
    return x.second.total != y.second.total ? x.second.total > y.second.total : x.first < y.first;
  });
  out->names = std::move(names_);
  names_.clear();
  std::fill(slot_.begin(), slot_.end(), 0);
  std::sort(out->names.begin(), out->names.end(), [](const auto& x, const auto& y) {
    return x.second.self != y.second.self ? x.second.self > y.second.self : x.first < y.first;
  });
}

void AddTrackRows(uint32_t track, std::vector<StatsRow>& rows, int64_t a, int64_t b,
                  const absl::flat_hash_map<uint64_t, int64_t>& outside, StatsTally* tally) {
  std::sort(rows.begin(), rows.end(), [](const StatsRow& x, const StatsRow& y) {
    return std::tie(x.ts, y.dur, x.id) < std::tie(y.ts, x.dur, y.id);
  });
  std::vector<int64_t> clipped(rows.size(), 0), children(rows.size(), 0);
  std::vector<size_t> open;  // slices not ended at the current row
  for (size_t i = 0; i < rows.size(); ++i) {
    const StatsRow& r = rows[i];
    if (r.kind != EventKind::kSlice) continue;
    clipped[i] = std::max<int64_t>(0, std::min(r.ts + r.dur, b) - std::max(r.ts, a));
    if (r.dur == 0) continue;
    std::erase_if(open, [&](size_t o) { return rows[o].ts + rows[o].dur <= r.ts; });
    const size_t none = rows.size();
    size_t parent = none;
    for (size_t o : open) {
      if (rows[o].lane < r.lane && rows[o].ts + rows[o].dur >= r.ts + r.dur &&
          (parent == none || rows[o].lane > rows[parent].lane)) {
        parent = o;
      }
    }
    if (parent != none) children[parent] += clipped[i];
    open.push_back(i);
  }
  RangeAgg& t = tally->Track(track);
  for (size_t i = 0; i < rows.size(); ++i) {
    const StatsRow& r = rows[i];
    RangeAgg& n = tally->Name(r.name);
    ++n.count;
    ++t.count;
    if (r.kind != EventKind::kSlice) continue;
    int64_t self = clipped[i] - children[i];
    if (!outside.empty()) {
      if (auto it = outside.find(r.id); it != outside.end()) self -= it->second;
    }
    self = std::max<int64_t>(0, self);
    n.min = n.slices == 0 ? clipped[i] : std::min(n.min, clipped[i]);
    n.max = std::max(n.max, clipped[i]);
    ++n.slices;
    n.total += clipped[i];
    n.self += self;
    ++t.slices;
    t.total += clipped[i];
    t.self += self;
  }
}

}  // namespace tracetable
