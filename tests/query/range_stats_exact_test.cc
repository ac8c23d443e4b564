// The shared exact tally of range statistics (query/range_stats_exact.h)
// against its definition written out the slow way: every slice's parent
// found by scanning all slices still open (the containing one of the
// greatest lane below its own), on random tracks laid out by the ingest's
// LaneLayout with deep and badly nested slices, zero-length slices and
// instants, random ranges and random `outside` times. The same rows with
// their lanes spread out to huge sparse values (the path that ranks lanes)
// give the same answer, and tallies filled apart and merged equal one.
#include <algorithm>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "format/lane_layout.h"
#include "gtest/gtest.h"
#include "query/range_stats_exact.h"

namespace tracetable {
namespace {

std::vector<StatsRow> RandomTrack(std::mt19937_64& rng) {
  std::vector<StatsRow> rows;
  const int n = 1 + static_cast<int>(rng() % 400);
  int64_t ts = 0;
  for (int i = 0; i < n; ++i) {
    ts += static_cast<int64_t>(rng() % 3 == 0 ? 0 : rng() % 50);
    StatsRow r;
    r.ts = ts;
    r.id = static_cast<uint64_t>(i) * 3 + rng() % 3;
    r.name = static_cast<uint32_t>(rng() % 12);
    const uint64_t k = rng() % 10;
    r.kind = k == 0 ? EventKind::kInstant : k == 1 ? EventKind::kFlowStart : EventKind::kSlice;
    if (r.kind == EventKind::kSlice && k != 2) r.dur = static_cast<int64_t>(rng() % (rng() % 4 == 0 ? 2000 : 60));
    rows.push_back(r);
  }
  std::sort(rows.begin(), rows.end(), StatsOrder);
  LaneLayout layout;
  for (StatsRow& r : rows) {
    if (r.kind == EventKind::kSlice) r.lane = layout.Place(r.ts, r.dur);
  }
  return rows;
}

// query/range_stats.h's definition, scanning every open slice per row.
std::map<uint32_t, RangeAgg> Slow(const std::vector<StatsRow>& rows, int64_t a, int64_t b,
                                  const absl::flat_hash_map<uint64_t, int64_t>& outside, RangeAgg* track) {
  std::vector<int64_t> clipped(rows.size(), 0), children(rows.size(), 0);
  std::vector<size_t> open;
  for (size_t i = 0; i < rows.size(); ++i) {
    const StatsRow& r = rows[i];
    if (r.kind != EventKind::kSlice) continue;
    clipped[i] = std::max<int64_t>(0, std::min(r.ts + r.dur, b) - std::max(r.ts, a));
    if (r.dur == 0) continue;
    std::erase_if(open, [&](size_t o) { return rows[o].ts + rows[o].dur <= r.ts; });
    size_t parent = rows.size();
    for (size_t o : open) {
      if (rows[o].lane < r.lane && rows[o].ts + rows[o].dur >= r.ts + r.dur &&
          (parent == rows.size() || rows[o].lane > rows[parent].lane)) {
        parent = o;
      }
    }
    if (parent != rows.size()) children[parent] += clipped[i];
    open.push_back(i);
  }
  std::map<uint32_t, RangeAgg> names;
  for (size_t i = 0; i < rows.size(); ++i) {
    RangeAgg one;
    one.count = 1;
    if (rows[i].kind == EventKind::kSlice) {
      int64_t self = clipped[i] - children[i];
      if (auto it = outside.find(rows[i].id); it != outside.end()) self -= it->second;
      one = {1, 1, clipped[i], std::max<int64_t>(0, self), clipped[i], clipped[i]};
    }
    StatsTally::Fold(&names[rows[i].name], one);
    StatsTally::Fold(track, one);
  }
  return names;
}

void ExpectSame(const RangeStats& got, const std::map<uint32_t, RangeAgg>& names, const RangeAgg& track) {
  ASSERT_EQ(got.names.size(), names.size());
  for (const auto& [name, g] : got.names) {
    const RangeAgg& w = names.at(name);
    EXPECT_EQ(std::tie(g.count, g.slices, g.total, g.self, g.min, g.max),
              std::tie(w.count, w.slices, w.total, w.self, w.min, w.max))
        << "name " << name;
  }
  ASSERT_EQ(got.tracks.size(), 1u);
  const RangeAgg& g = got.tracks[0].second;
  EXPECT_EQ(std::tie(g.count, g.slices, g.total, g.self), std::tie(track.count, track.slices, track.total, track.self));
}

TEST(RangeStatsExact, TallyMatchesTheDefinitionAndLaneValuesOnlyMatterByOrder) {
  std::mt19937_64 rng(5);
  for (int round = 0; round < 300; ++round) {
    SCOPED_TRACE(round);
    std::vector<StatsRow> rows = RandomTrack(rng);
    const int64_t span = rows.back().ts + 100;
    int64_t a = static_cast<int64_t>(rng() % static_cast<uint64_t>(span)) - 20;
    int64_t b = a + static_cast<int64_t>(rng() % static_cast<uint64_t>(span));
    absl::flat_hash_map<uint64_t, int64_t> outside;
    for (const StatsRow& r : rows) {
      if (rng() % 8 == 0) outside[r.id] = static_cast<int64_t>(rng() % 40);
    }
    RangeAgg want_track;
    const std::map<uint32_t, RangeAgg> want = Slow(rows, a, b, outside, &want_track);

    StatsTally tally(4);  // fewer than the names: the tally grows
    AddTrackRows(7, rows, a, b, outside, &tally);
    RangeStats got;
    tally.MoveInto(&got);
    ExpectSame(got, want, want_track);

    std::vector<StatsRow> sparse = rows;
    for (StatsRow& r : sparse) r.lane = r.lane * (1u << 21) + 5;
    StatsTally apart(16), other(16);
    // The same rows tallied as two halves of one track's names would not
    // be exact (parents cross), so split by whole copies: twice the rows
    // in two tallies must merge to twice every sum.
    AddTrackRows(7, sparse, a, b, outside, &apart);
    AddTrackRows(7, sparse, a, b, outside, &other);
    apart.Merge(other);
    RangeStats merged;
    apart.MoveInto(&merged);
    std::map<uint32_t, RangeAgg> twice = want;
    for (auto& [name, agg] : twice) StatsTally::Fold(&agg, want.at(name));
    RangeAgg twice_track = want_track;
    StatsTally::Fold(&twice_track, want_track);
    ExpectSame(merged, twice, twice_track);
    ASSERT_FALSE(::testing::Test::HasFailure());
  }
}

}  // namespace
}  // namespace tracetable
