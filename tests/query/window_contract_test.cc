// The window contract (query/window.h) checked against a brute-force
// reference on randomized traces: every visible event exactly, every short
// event in a group whose count is exact, counters' first/min/max/last per
// bin, and the size bound.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>
#include <tuple>

#include "format/lane_layout.h"
#include "format/levels.h"
#include "gtest/gtest.h"
#include "query/window.h"
#include "store/table_builder.h"

namespace tracetable {
namespace {

struct RefEvent {
  uint32_t track;
  EventKind kind;
  int64_t ts, dur;
  uint32_t name;
  uint64_t id;
  uint32_t lane = 0;
  double value = 0;
};

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("tt_window_test_" + std::to_string(getpid()) + "_" + std::to_string(counter_++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string Sub(const std::string& name) const { return (path_ / name).string(); }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

struct Trace {
  std::vector<RefEvent> events;
  std::vector<bool> counter_track;
  int64_t span = 0;
};

// Random trace: nested and overlapping slices with long-tailed durations,
// zero-length slices, a burst of 1000 events at one time, instants, flows and
// counters, on a few tracks.
Trace MakeTrace(uint32_t seed, TableBuilder* b) {
  std::mt19937_64 rng(seed);
  Trace tr;
  b->BeginInput("random", "");
  EXPECT_TRUE(b->ToRelativePs(0, 0).ok());
  const int threads = 1 + rng() % 4;
  std::vector<uint32_t> names;
  for (int i = 0; i < 20; ++i) names.push_back(b->Intern("name" + std::to_string(i)));
  const int64_t span = int64_t{1000} << (10 + rng() % 26);  // 1 us .. 35 s
  tr.span = span;
  uint64_t id = 1;
  auto add = [&](uint32_t track, EventKind kind, int64_t ts, int64_t dur, double value = 0) {
    Event e;
    e.kind = kind;
    e.track = track;
    e.ts = ts;
    e.dur = dur;
    e.name = names[rng() % names.size()];
    e.value = value;
    if (kind == EventKind::kFlowStart) e.flow_id = b->Intern("f" + std::to_string(rng() % 50));
    ASSERT_TRUE(b->Add(e).ok());
    tr.events.push_back({track, kind, ts, dur, e.name, id++, 0, value});
  };
  std::lognormal_distribution<double> logdur(std::log(std::max<double>(span / 5000.0, 1)), 3.0);
  for (int t = 0; t < threads; ++t) {
    const std::string tid = std::to_string(t + 1);
    const uint32_t track = b->ThreadTrack({"1", true}, {tid, true});
    if (tr.counter_track.size() <= track) tr.counter_track.resize(track + 1);
    const int n = 200 + rng() % 3000;
    // Nested stacks: a parent then children inside it.
    for (int i = 0; i < n; ++i) {
      const int64_t ts = static_cast<int64_t>(rng() % span);
      int64_t dur = std::min<int64_t>(static_cast<int64_t>(logdur(rng)), span);
      if (rng() % 10 == 0) dur = 0;
      if (rng() % 50 == 0) dur = span * 2;  // longer than any window
      add(track, EventKind::kSlice, ts, dur);
      int64_t child = ts;
      for (int d = 0; d < 3 && dur > 4; ++d) {
        dur /= 3;
        child += dur / 2;
        add(track, EventKind::kSlice, child, dur);
      }
      if (rng() % 7 == 0) add(track, EventKind::kInstant, static_cast<int64_t>(rng() % span), 0);
      if (rng() % 11 == 0) add(track, EventKind::kFlowStart, static_cast<int64_t>(rng() % span), 0);
    }
    if (t == 0) {
      const int64_t at = static_cast<int64_t>(rng() % span);
      for (int i = 0; i < 1000; ++i) add(track, EventKind::kSlice, at, rng() % 3 ? 0 : 1 + rng() % 2000);
    }
  }
  const uint32_t counter = b->CounterTrack({"1", true}, "mem", "bytes");
  if (tr.counter_track.size() <= counter) tr.counter_track.resize(counter + 1);
  tr.counter_track[counter] = true;
  for (int i = 0; i < 2000; ++i) {
    add(counter, EventKind::kCounter, static_cast<int64_t>(rng() % span), 0,
        static_cast<double>(rng() % 1000));
  }
  // Lanes, as the builder lays them out: per track in (ts, -dur, id) order.
  std::vector<RefEvent*> order;
  for (RefEvent& e : tr.events) order.push_back(&e);
  std::sort(order.begin(), order.end(), [](const RefEvent* a, const RefEvent* b) {
    return std::tie(a->track, a->ts, b->dur, a->id) < std::tie(b->track, b->ts, a->dur, b->id);
  });
  LaneLayout layout;
  uint32_t current = UINT32_MAX;
  for (RefEvent* e : order) {
    if (e->track != current) {
      layout.Reset();
      current = e->track;
    }
    if (e->kind == EventKind::kSlice) e->lane = layout.Place(e->ts, e->dur);
  }
  return tr;
}

// What an answer item means, comparable across answer and reference.
using Key = std::tuple<uint32_t /*track*/, int /*kind*/, int64_t /*ts*/, int64_t /*dur*/,
                       uint64_t /*count*/, uint32_t /*lane*/, uint64_t /*id*/, double /*value*/>;

Key EventKey(const RefEvent& e) {
  return {e.track, static_cast<int>(e.kind), e.ts, e.dur, 1, e.lane, e.id, e.value};
}

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

std::multiset<Key> Reference(const Trace& tr, int64_t min_ts, const WindowRequest& req,
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
  for (const RefEvent& e : tr.events) {
    if (tr.counter_track[e.track]) {
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

std::multiset<Key> Answer(const WindowResult& res) {
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

void CheckWindows(uint32_t seed, uint64_t budget) {
  TempDir dir;
  BuildOptions opts;
  opts.output = dir.Sub("t.tracetable");
  opts.memory_budget = budget;
  auto builder = TableBuilder::Create(opts);
  ASSERT_TRUE(builder.ok()) << builder.status();
  Trace tr = MakeTrace(seed, builder->get());
  ASSERT_TRUE((*builder)->Finish().ok());
  auto table = Table::Open(opts.output);
  ASSERT_TRUE(table.ok()) << table.status();
  const Table& t = **table;
  ASSERT_EQ(t.meta().num_events(), tr.events.size());

  std::mt19937_64 rng(seed * 7919 + 1);
  const int64_t min_ts = t.meta().min_ts();
  const int64_t max_end = t.meta().max_end();
  for (int w = 0; w < 40; ++w) {
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
      // The bound: per track and lane, about 2 * width / resolution + 3 per kind.
      std::map<std::pair<uint32_t, uint32_t>, uint64_t> per_lane;
      for (const WindowItem& i : res->items) {
        if (!tr.counter_track[i.track]) ++per_lane[{i.track, i.row.lane}];
      }
      const double bound = (width / double(req.resolution) + 2) + 3 * (2 * width / double(req.resolution) + 3);
      for (const auto& [k, n] : per_lane) ASSERT_LE(n, bound) << "track " << k.first << " lane " << k.second;
    }
  }
}

TEST(WindowContract, RandomTraces) {
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE(seed);
    CheckWindows(seed, 1ull << 30);
  }
}

TEST(WindowContract, TinyMemoryBudgetSpills) {
  // 64 KiB of records: every trace spills dozens of sorted runs.
  for (uint32_t seed = 20; seed <= 23; ++seed) {
    SCOPED_TRACE(seed);
    CheckWindows(seed, 64 << 10);
  }
}

TEST(WindowContract, LimitTruncatesAndSaysSo) {
  TempDir dir;
  BuildOptions opts;
  opts.output = dir.Sub("t.tracetable");
  auto builder = TableBuilder::Create(opts);
  ASSERT_TRUE(builder.ok());
  Trace tr = MakeTrace(5, builder->get());
  ASSERT_TRUE((*builder)->Finish().ok());
  auto table = Table::Open(opts.output);
  ASSERT_TRUE(table.ok());
  WindowRequest req;
  req.start = (*table)->meta().min_ts();
  req.end = (*table)->meta().max_end();
  req.limit = 10;
  auto res = QueryWindow(**table, req);
  ASSERT_TRUE(res.ok());
  EXPECT_TRUE(res->truncated);
  EXPECT_EQ(res->items.size(), 10u);
  req.limit = 0;
  auto all = QueryWindow(**table, req);
  EXPECT_FALSE(all->truncated);
  EXPECT_EQ(all->items.size(), tr.events.size());
}

}  // namespace
}  // namespace tracetable
