// Brute-force range statistics for tests: every event of the table (a
// resolution-0 window over the whole span), each slice's parent found by
// its definition in query/range_stats.h (the containing slice of the
// greatest lane below its own among those before it in (ts, longer first,
// id) order, looked up lane by lane since a lane's slices never overlap),
// and clipped times summed per range; Expect compares a RangeStats with it
// field by field.
#ifndef TRACETABLE_TESTS_QUERY_RANGE_STATS_REFERENCE_H_
#define TRACETABLE_TESTS_QUERY_RANGE_STATS_REFERENCE_H_

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "query/range_stats.h"
#include "query/window.h"
#include "store/table.h"

namespace tracetable::testing {

class RangeStatsReference {
 public:
  explicit RangeStatsReference(const Table& t) : t_(t) {
    WindowRequest req;
    req.start = t.meta().min_ts();
    req.end = t.meta().max_end();
    absl::StatusOr<WindowResult> all = QueryWindow(t, req);
    EXPECT_TRUE(all.ok()) << all.status();
    if (!all.ok()) return;
    items_ = std::move(all->items);
    parent_.assign(items_.size(), kNone);
    for (size_t i = 0; i < items_.size();) {
      size_t j = i;
      while (j < items_.size() && items_[j].track == items_[i].track) ++j;
      FindParents(i, j);
      i = j;
    }
  }

  void Expect(const RangeStats& got, const std::vector<uint32_t>& tracks, int64_t a, int64_t b) const {
    struct Agg {
      uint64_t count = 0, slices = 0;
      int64_t total = 0, self = 0, min = 0, max = 0;
    };
    std::set<uint32_t> want_tracks(tracks.begin(), tracks.end());
    auto wanted = [&](uint32_t track) { return want_tracks.empty() || want_tracks.count(track) > 0; };
    std::vector<int64_t> clip(items_.size(), 0), children(items_.size(), 0);
    std::vector<bool> in(items_.size(), false);
    std::map<uint32_t, const WindowItem*> carry;  // counters: the last sample before a
    std::map<uint32_t, Agg> names, by_track;
    for (size_t i = 0; i < items_.size(); ++i) {
      const WindowItem& it = items_[i];
      if (!wanted(it.track)) continue;
      if (Counter(it.track)) {
        if (it.row.ts < a) {
          carry[it.track] = &it;
        } else if (it.row.ts <= b) {
          ++by_track[it.track].count;
        }
        continue;
      }
      in[i] = it.row.ts <= b && it.row.ts + it.row.dur >= a;
      if (in[i] && it.row.kind == EventKind::kSlice) {
        clip[i] = std::max<int64_t>(0, std::min(it.row.ts + it.row.dur, b) - std::max(it.row.ts, a));
        if (parent_[i] != kNone) children[parent_[i]] += clip[i];
      }
    }
    for (const auto& [track, it] : carry) ++by_track[track].count;
    for (size_t i = 0; i < items_.size(); ++i) {
      if (!in[i]) continue;
      const WindowItem& it = items_[i];
      Agg& n = names[it.row.name];
      Agg& k = by_track[it.track];
      ++n.count;
      ++k.count;
      if (it.row.kind != EventKind::kSlice) continue;
      const int64_t self = std::max<int64_t>(0, clip[i] - children[i]);
      n.min = n.slices == 0 ? clip[i] : std::min(n.min, clip[i]);
      n.max = std::max(n.max, clip[i]);
      ++n.slices;
      ++k.slices;
      n.total += clip[i];
      k.total += clip[i];
      n.self += self;
      k.self += self;
    }
    EXPECT_FALSE(got.truncated);
    EXPECT_EQ(got.covered_to, b);
    ASSERT_EQ(got.names.size(), names.size());
    for (const auto& [name, g] : got.names) {
      const Agg& w = names[name];
      EXPECT_EQ(g.count, w.count) << "name " << name;
      EXPECT_EQ(g.slices, w.slices) << "name " << name;
      EXPECT_EQ(g.total, w.total) << "name " << name;
      EXPECT_EQ(g.self, w.self) << "name " << name;
      EXPECT_EQ(g.min, w.min) << "name " << name;
      EXPECT_EQ(g.max, w.max) << "name " << name;
    }
    ASSERT_EQ(got.tracks.size(), by_track.size());
    for (const auto& [track, g] : got.tracks) {
      const Agg& w = by_track[track];
      EXPECT_EQ(g.count, w.count) << "track " << track;
      EXPECT_EQ(g.slices, w.slices) << "track " << track;
      EXPECT_EQ(g.total, w.total) << "track " << track;
      EXPECT_EQ(g.self, w.self) << "track " << track;
    }
  }

  const std::vector<WindowItem>& items() const { return items_; }

 private:
  static constexpr size_t kNone = ~size_t{0};

  bool Counter(uint32_t track) const {
    return t_.resources().tracks(static_cast<int>(track)).kind() == proto::Track::COUNTER;
  }

  // Items [from, to) are one track's.
  void FindParents(size_t from, size_t to) {
    std::vector<size_t> order;
    for (size_t i = from; i < to; ++i) {
      if (items_[i].row.kind == EventKind::kSlice && items_[i].row.dur > 0) order.push_back(i);
    }
    auto before = [&](size_t x, size_t y) {
      const TileRow &p = items_[x].row, &q = items_[y].row;
      return std::tie(p.ts, q.dur, p.id) < std::tie(q.ts, p.dur, q.id);
    };
    std::sort(order.begin(), order.end(), before);
    std::map<uint32_t, std::vector<size_t>> lanes;  // lane -> its slices in order
    for (size_t i : order) lanes[items_[i].row.lane].push_back(i);
    for (const auto& [lane, v] : lanes) {
      for (size_t k = 1; k < v.size(); ++k) {
        ASSERT_LE(items_[v[k - 1]].row.ts + items_[v[k - 1]].row.dur, items_[v[k]].row.ts) << "lane " << lane << " overlaps";
      }
    }
    for (size_t i : order) {
      const TileRow& x = items_[i].row;
      for (auto it = lanes.begin(); it != lanes.end() && it->first < x.lane; ++it) {
        const std::vector<size_t>& v = it->second;
        // The lane's last slice starting before x: the only one that can contain it.
        auto pos = std::partition_point(v.begin(), v.end(), [&](size_t c) { return before(c, i); });
        if (pos == v.begin()) continue;
        const TileRow& p = items_[*(pos - 1)].row;
        if (p.ts <= x.ts && p.ts + p.dur >= x.ts + x.dur) parent_[i] = *(pos - 1);
      }
    }
  }

  const Table& t_;
  std::vector<WindowItem> items_;
  std::vector<size_t> parent_;
};

}  // namespace tracetable::testing

#endif  // TRACETABLE_TESTS_QUERY_RANGE_STATS_REFERENCE_H_
