// Brute-force reference for the window contract (query/window.h), shared by
// the randomized and the real-trace tests: from a plain list of events it
// computes exactly what a window answer must hold, without tiles or levels.
#ifndef TRACETABLE_TESTS_QUERY_WINDOW_REFERENCE_H_
#define TRACETABLE_TESTS_QUERY_WINDOW_REFERENCE_H_

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "query/window.h"

namespace tracetable::testing {

struct RefEvent {
  uint32_t track;
  EventKind kind;
  int64_t ts, dur;
  uint32_t name;
  uint64_t id;
  uint32_t lane = 0;
  double value = 0;
};

struct Trace {
  std::vector<RefEvent> events;
  std::vector<bool> counter_track;
  int64_t span = 0;
};

// What an answer item means, comparable across answer and reference.
using Key = std::tuple<uint32_t /*track*/, int /*kind*/, int64_t /*ts*/, int64_t /*dur*/,
                       uint64_t /*count*/, uint32_t /*lane*/, uint64_t /*id*/, double /*value*/>;

inline Key EventKey(const RefEvent& e) {
  return {e.track, static_cast<int>(e.kind), e.ts, e.dur, 1, e.lane, e.id, e.value};
}

inline int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

inline std::multiset<Key> Reference(const Trace& tr, int64_t min_ts, const WindowRequest& req,
                             int level) {
  std::multiset<Key> out;
  const int64_t q = SummaryBinWidth(req.resolution, level);
  struct Group {
    int64_t ts = INT64_MAX, end = INT64_MIN;
    uint64_t count = 0;
    const RefEvent* only = nullptr;
    int kind = 0;
  };
  std::map<std::tuple<uint32_t, int64_t, uint32_t, uint32_t>, Group> groups;
  std::map<std::pair<uint32_t, int64_t>, std::vector<const RefEvent*>> counter_bins;
  std::map<uint32_t, const RefEvent*> carry;  // per counter track: last sample before the window
  for (const RefEvent& e : tr.events) {
    if (tr.counter_track[e.track]) {
      const int64_t from =
          level == 0 ? req.start : min_ts + FloorDiv(req.start - min_ts, q) * q;
      if (e.ts < from) {
        const RefEvent*& c = carry[e.track];
        if (!c || std::tie(e.ts, e.id) > std::tie(c->ts, c->id)) c = &e;
        continue;
      }
      if (level == 0) {
        if (e.ts >= req.start && e.ts <= req.end) out.insert(EventKey(e));
        continue;
      }
      // Whole bins that overlap the window.
      const int64_t bin = FloorDiv(e.ts - min_ts, q);
      if (bin >= FloorDiv(req.start - min_ts, q) && bin <= FloorDiv(req.end - min_ts, q)) {
        counter_bins[{e.track, bin}].push_back(&e);
      }
      continue;
    }
    const bool overlaps = e.ts <= req.end && e.ts + e.dur >= req.start;
    if (level == 0 || e.dur >= req.resolution) {
      if (overlaps) out.insert(EventKey(e));
      continue;
    }
    Group& g = groups[{e.track, FloorDiv(e.ts - min_ts, q), KindGroup(e.kind), e.lane}];
    g.ts = std::min(g.ts, e.ts);
    g.end = std::max(g.end, e.ts + e.dur);
    g.only = g.count == 0 ? &e : nullptr;
    g.kind = static_cast<int>(e.kind);
    ++g.count;
  }
  for (const auto& [k, g] : groups) {
    if (!(g.ts <= req.end && g.end >= req.start)) continue;
    if (g.count == 1) {
      out.insert(EventKey(*g.only));
    } else {
      out.insert(Key{std::get<0>(k), -1 - static_cast<int>(std::get<2>(k)), g.ts, g.end - g.ts,
                     g.count, std::get<3>(k), 0, 0});
    }
  }
  for (const auto& [track, e] : carry) out.insert(EventKey(*e));
  for (auto& [k, samples] : counter_bins) {
    std::sort(samples.begin(), samples.end(), [](const RefEvent* a, const RefEvent* b) {
      return std::tie(a->ts, a->id) < std::tie(b->ts, b->id);
    });
    size_t lo = 0, hi = 0;
    for (size_t i = 1; i < samples.size(); ++i) {
      if (samples[i]->value < samples[lo]->value) lo = i;
      if (samples[i]->value > samples[hi]->value) hi = i;
    }
    std::set<size_t> picks = {0, lo, hi, samples.size() - 1};
    for (size_t p : picks) out.insert(EventKey(*samples[p]));
  }
  return out;
}

inline std::multiset<Key> Answer(const WindowResult& res) {
  std::multiset<Key> out;
  for (const WindowItem& i : res.items) {
    const TileRow& r = i.row;
    if (i.summary) {
      out.insert(Key{i.track, -1 - static_cast<int>(KindGroup(r.kind)), r.ts, r.dur, r.count,
                     r.lane, 0, 0});
    } else {
      out.insert(Key{i.track, static_cast<int>(r.kind), r.ts, r.dur, 1, r.lane, r.id, r.value});
    }
  }
  return out;
}

// Runs `windows` random windows and resolutions over `t` and compares each
// answer with Reference(). `seed` picks the windows.
inline void CheckWindowsAgainst(const Table& t, const Trace& tr, uint32_t seed, int windows) {
  std::mt19937_64 rng(seed * 7919 + 1);
  const int64_t min_ts = t.meta().min_ts();
  const int64_t max_end = t.meta().max_end();
  for (int w = 0; w < windows; ++w) {
    WindowRequest req;
    const int64_t width = std::max<int64_t>(1, (max_end - min_ts) >> (rng() % 20));
    req.start = min_ts - width / 4 + static_cast<int64_t>(rng() % (max_end - min_ts + 1));
    req.end = req.start + width;
    switch (rng() % 4) {
      case 0: req.resolution = 0; break;
      case 1: req.resolution = width / 2000; break;
      case 2: req.resolution = width / (1 + rng() % 50); break;
      default: req.resolution = 1 + rng() % 5000; break;
    }
    auto res = QueryWindow(t, req);
    ASSERT_TRUE(res.ok()) << res.status();
    const auto expected = Reference(tr, min_ts, req, res->level);
    const auto got = Answer(*res);
    if (got != expected) {
      std::string diff;
      auto show = [&](const Key& k) {
        return "track " + std::to_string(std::get<0>(k)) + " kind " + std::to_string(std::get<1>(k)) +
               " ts " + std::to_string(std::get<2>(k)) + " dur " + std::to_string(std::get<3>(k)) +
               " count " + std::to_string(std::get<4>(k)) + " lane " + std::to_string(std::get<5>(k)) +
               " id " + std::to_string(std::get<6>(k)) + "\n";
      };
      int shown = 0;
      for (const Key& k : expected) {
        if (!got.count(k) && shown++ < 5) diff += "missing: " + show(k);
      }
      shown = 0;
      for (const Key& k : got) {
        if (!expected.count(k) && shown++ < 5) diff += "extra:   " + show(k);
      }
      ADD_FAILURE() << diff << " bin " << res->bin;
    }
    ASSERT_EQ(got.size(), expected.size())
        << "seed " << seed << " window " << w << " [" << req.start << "," << req.end
        << "] res " << req.resolution << " level " << res->level;
    ASSERT_TRUE(got == expected) << "seed " << seed << " window " << w;
    if (req.resolution > 0) {
      std::map<std::pair<uint32_t, uint32_t>, uint64_t> per_lane;
      for (const WindowItem& i : res->items) {
        if (!tr.counter_track[i.track]) ++per_lane[{i.track, i.row.lane}];
      }
      // Per lane: events at least R long do not overlap (W/R + 2); groups
      // are bins of Q >= R (W/R + 3 per kind).
      const double bound = (width / double(req.resolution) + 2) + 3 * (width / double(req.resolution) + 3);
      for (const auto& [k, n] : per_lane) ASSERT_LE(n, bound) << "track " << k.first << " lane " << k.second;
    }
  }
}


}  // namespace tracetable::testing

#endif  // TRACETABLE_TESTS_QUERY_WINDOW_REFERENCE_H_
