#include "query/range_stats_exact.h"

#include <algorithm>
#include <tuple>

namespace tracetable {
namespace {

void Fold(RangeAgg* into, const RangeAgg& a) {
  if (a.slices > 0) {
    into->min = into->slices == 0 ? a.min : std::min(into->min, a.min);
    into->max = std::max(into->max, a.max);
  }
  into->count += a.count;
  into->slices += a.slices;
  into->total += a.total;
  into->self += a.self;
}

}  // namespace

void StatsTally::AddName(uint32_t name, const RangeAgg& a) { Fold(&names[name], a); }

void StatsTally::AddTrack(uint32_t track, const RangeAgg& a) {
  RangeAgg& t = tracks[track];
  t.count += a.count;
  t.slices += a.slices;
  t.total += a.total;
  t.self += a.self;
}

void StatsTally::MoveInto(RangeStats* out) {
  out->tracks.assign(tracks.begin(), tracks.end());
  std::sort(out->tracks.begin(), out->tracks.end(), [](const auto& x, const auto& y) {
    return x.second.total != y.second.total ? x.second.total > y.second.total : x.first < y.first;
  });
  out->names.assign(names.begin(), names.end());
  std::sort(out->names.begin(), out->names.end(), [](const auto& x, const auto& y) {
    return x.second.self != y.second.self ? x.second.self > y.second.self : x.first < y.first;
  });
}

void AddTrackRows(uint32_t track, std::vector<TileRow>& rows, int64_t a, int64_t b,
                  const absl::flat_hash_map<uint64_t, int64_t>& outside, StatsTally* tally) {
  std::sort(rows.begin(), rows.end(), [](const TileRow& x, const TileRow& y) {
    return std::tie(x.ts, y.dur, x.id) < std::tie(y.ts, x.dur, y.id);
  });
  std::vector<int64_t> clipped(rows.size(), 0), children(rows.size(), 0);
  std::vector<size_t> open;  // slices not ended at the current row
  for (size_t i = 0; i < rows.size(); ++i) {
    const TileRow& r = rows[i];
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
  RangeAgg& t = tally->tracks[track];
  for (size_t i = 0; i < rows.size(); ++i) {
    const TileRow& r = rows[i];
    RangeAgg one;
    one.count = 1;
    if (r.kind == EventKind::kSlice) {
      int64_t self = clipped[i] - children[i];
      if (auto it = outside.find(r.id); it != outside.end()) self -= it->second;
      one.slices = 1;
      one.total = clipped[i];
      one.self = std::max<int64_t>(0, self);
      one.min = one.max = clipped[i];
    }
    tally->AddName(r.name, one);
    t.count += one.count;
    t.slices += one.slices;
    t.total += one.total;
    t.self += one.self;
  }
}

}  // namespace tracetable
