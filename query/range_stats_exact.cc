#include "query/range_stats_exact.h"

#include <algorithm>
#include <cstdint>

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

void AddTrackRows(uint32_t track, const std::vector<StatsRow>& rows, int64_t a, int64_t b,
                  const absl::flat_hash_map<uint64_t, int64_t>& outside, StatsTally* tally) {
  // Per row its children's time inside [a, b]; per lane its latest slice.
  // Reused by the calls of one thread: a range may hold millions of rows.
  thread_local std::vector<int64_t> children;
  thread_local std::vector<size_t> last;
  constexpr size_t kNone = SIZE_MAX;
  thread_local std::vector<uint32_t> lanes;
  children.assign(rows.size(), 0);
  last.clear();
  // Lanes index `last` directly; sparse huge ones (a deep async nest block,
  // or a damaged tile) by their rank among the rows' lanes, same order.
  uint32_t max_lane = 0;
  for (const StatsRow& r : rows) max_lane = std::max(max_lane, r.lane);
  lanes.clear();
  if (max_lane > (1u << 20)) {
    for (const StatsRow& r : rows) lanes.push_back(r.lane);
    std::sort(lanes.begin(), lanes.end());
    lanes.erase(std::unique(lanes.begin(), lanes.end()), lanes.end());
  }
  auto slot = [&](uint32_t lane) -> size_t {
    return lanes.empty() ? lane : static_cast<size_t>(std::lower_bound(lanes.begin(), lanes.end(), lane) - lanes.begin());
  };
  auto clip = [a, b](const StatsRow& r) { return std::max<int64_t>(0, std::min(r.ts + r.dur, b) - std::max(r.ts, a)); };
  for (size_t i = 0; i < rows.size(); ++i) {
    const StatsRow& r = rows[i];
    if (r.kind != EventKind::kSlice || r.dur == 0) continue;
    const int64_t end = r.ts + r.dur;
    const size_t own = slot(r.lane);
    for (size_t lane = std::min(own, last.size()); lane-- > 0;) {
      const size_t o = last[lane];
      if (o == kNone) continue;
      const int64_t o_end = rows[o].ts + rows[o].dur;
      if (o_end > r.ts && o_end >= end) {
        children[o] += clip(r);
        break;
      }
    }
    if (own >= last.size()) last.resize(own + 1, kNone);
    last[own] = i;
  }
  RangeAgg& t = tally->Track(track);
  for (size_t i = 0; i < rows.size(); ++i) {
    const StatsRow& r = rows[i];
    RangeAgg& n = tally->Name(r.name);
    ++n.count;
    ++t.count;
    if (r.kind != EventKind::kSlice) continue;
    const int64_t clipped = clip(r);
    int64_t self = clipped - children[i];
    if (!outside.empty()) {
      if (auto it = outside.find(r.id); it != outside.end()) self -= it->second;
    }
    self = std::max<int64_t>(0, self);
    n.min = n.slices == 0 ? clipped : std::min(n.min, clipped);
    n.max = std::max(n.max, clipped);
    ++n.slices;
    n.total += clipped;
    n.self += self;
    ++t.slices;
    t.total += clipped;
    t.self += self;
  }
}

}  // namespace tracetable
