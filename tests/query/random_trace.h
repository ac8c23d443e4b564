// Randomized traces for the query tests: a builder is fed nested and
// overlapping slices with long-tailed durations, zero-length slices, a burst
// of 1000 events at one time, instants, flows and counters on a few tracks,
// and the same events come back as the reference's Trace (lanes as the
// builder lays them out). TempDir is a scratch folder removed at the end;
// RandomTable builds such a trace into a real table and opens it.
#ifndef TRACETABLE_TESTS_QUERY_RANDOM_TRACE_H_
#define TRACETABLE_TESTS_QUERY_RANDOM_TRACE_H_

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "format/lane_layout.h"
#include "gtest/gtest.h"
#include "store/table.h"
#include "store/table_builder.h"
#include "tests/query/window_reference.h"

namespace tracetable::testing {

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

// Async events stand in the reference on kAsyncGroup + their group until
// the table says which track each group got (ResolveAsyncTracks).
constexpr uint32_t kAsyncGroup = 0x80000000u;

// Async b/e/n events of a few ids on a few groups (names): nests of an id
// with slices of other names inside, reused and overlapping ids, begins
// without end and ends without begin. The reference pairs them as the
// Trace Event Format says (per id in time order, last in first out), puts a
// nest on its outermost slice's group and lays each group out by brute
// force: a nest takes the lowest block of lanes as tall as itself that no
// earlier nest still holds at its start; a slice sits at depth lanes below
// its root.
inline void AddAsyncNests(std::mt19937_64& rng, TableBuilder* b, const std::vector<uint32_t>& names,
                          int64_t span, uint64_t* id, Trace* tr) {
  struct Raw {
    EventKind kind;
    int64_t ts;
    uint32_t key, group, name;
    uint64_t id;
  };
  std::vector<Raw> raw;
  const int groups = 1 + rng() % 3;
  std::vector<uint32_t> handles, keys;
  for (int g = 0; g < groups; ++g) handles.push_back(b->AsyncTrack({"1", true}, "async" + std::to_string(g)));
  for (int k = 0; k < 12; ++k) keys.push_back(b->Intern("cat|" + std::to_string(k)));
  auto add = [&](EventKind kind, int64_t ts, uint32_t key) {
    Event e;
    e.kind = kind;
    const uint32_t g = rng() % groups;
    e.track = handles[g];
    e.ts = ts;
    e.name = names[rng() % names.size()];
    e.flow_id = key;
    ASSERT_TRUE(b->Add(e).ok());
    raw.push_back({kind, ts, key, g, e.name, (*id)++});
  };
  std::function<void(uint32_t, int64_t, int64_t, int)> nest = [&](uint32_t key, int64_t ts, int64_t dur, int depth) {
    add(EventKind::kAsyncBegin, ts, key);
    int64_t at = ts;
    for (int c = rng() % 4; c > 0 && depth < 4; --c) {
      const int64_t left = ts + dur - at;
      const int64_t start = at + (left > 0 ? static_cast<int64_t>(rng() % (left / 2 + 1)) : 0);
      const int64_t d = rng() % 5 == 0 ? 0 : static_cast<int64_t>(rng() % (ts + dur - start + 1));
      nest(key, start, d, depth + 1);
      at = start + d;
    }
    if (rng() % 5 == 0) add(EventKind::kAsyncInstant, ts + static_cast<int64_t>(rng() % (dur + 1)), key);
    if (rng() % 30 != 0) add(EventKind::kAsyncEnd, ts + dur, key);
  };
  for (int i = 100 + rng() % 400; i > 0; --i) {
    const int64_t ts = static_cast<int64_t>(rng() % span);
    const int64_t dur = static_cast<int64_t>(rng() % (span / 8 + 1));
    nest(keys[rng() % keys.size()], ts, dur, 0);
    if (rng() % 20 == 0) add(EventKind::kAsyncEnd, static_cast<int64_t>(rng() % span), keys[rng() % keys.size()]);
    if (rng() % 10 == 0) add(EventKind::kAsyncInstant, static_cast<int64_t>(rng() % span), keys[rng() % keys.size()]);
  }
  // Unmatched begins end where the table ends.
  int64_t max_end = INT64_MIN;
  for (const RefEvent& e : tr->events) max_end = std::max(max_end, e.ts + e.dur);
  for (const Raw& r : raw) max_end = std::max(max_end, r.ts);
  struct Slice {
    int64_t ts, dur;
    uint64_t id, root;
    uint32_t group, name, depth, height;
  };
  std::vector<Slice> slices;
  std::vector<const Raw*> order;
  for (const Raw& r : raw) order.push_back(&r);
  std::sort(order.begin(), order.end(),
            [](const Raw* x, const Raw* y) { return std::tie(x->key, x->ts, x->id) < std::tie(y->key, y->ts, y->id); });
  struct Open {
    const Raw* begin;
    uint32_t group, deepest;
  };
  std::vector<Open> stack;
  auto close = [&](int64_t end) {
    const Open o = stack.back();
    const uint32_t depth = stack.size() - 1;
    slices.push_back({o.begin->ts, end - o.begin->ts, o.begin->id, stack.front().begin->id, o.group, o.begin->name,
                      depth, o.deepest - depth + 1});
    stack.pop_back();
    if (!stack.empty()) stack.back().deepest = std::max(stack.back().deepest, o.deepest);
  };
  for (size_t i = 0; i < order.size(); ++i) {
    const Raw& r = *order[i];
    if (r.kind == EventKind::kAsyncBegin) {
      const uint32_t depth = stack.size();
      stack.push_back({&r, stack.empty() ? r.group : stack.front().group, depth});
    } else if (r.kind == EventKind::kAsyncInstant) {
      tr->events.push_back({kAsyncGroup + (stack.empty() ? r.group : stack.front().group), EventKind::kInstant, r.ts,
                            0, r.name, r.id, 0, 0});
    } else if (!stack.empty()) {
      close(r.ts);
    }
    if (i + 1 == order.size() || order[i + 1]->key != r.key) {
      while (!stack.empty()) close(max_end);
    }
  }
  std::sort(slices.begin(), slices.end(), [](const Slice& x, const Slice& y) {
    return std::tie(x.group, x.ts, y.dur, x.id) < std::tie(y.group, y.ts, x.dur, y.id);
  });
  struct Block {
    uint32_t group, base, height;
    int64_t end;
  };
  std::vector<Block> blocks;
  std::map<uint64_t, uint32_t> base_of;
  for (const Slice& sl : slices) {
    uint32_t lane = 0;
    if (sl.root == sl.id) {
      auto taken = [&](uint32_t l) {
        for (const Block& bl : blocks) {
          if (bl.group == sl.group && bl.end > sl.ts && l >= bl.base && l < bl.base + bl.height) return true;
        }
        return false;
      };
      for (;; ++lane) {
        bool free = true;
        for (uint32_t l = lane; l < lane + sl.height && free; ++l) free = !taken(l);
        if (free) break;
      }
      blocks.push_back({sl.group, lane, sl.height, sl.ts + sl.dur});
      base_of[sl.id] = lane;
    } else {
      lane = base_of.at(sl.root) + sl.depth;
    }
    tr->events.push_back({kAsyncGroup + sl.group, EventKind::kSlice, sl.ts, sl.dur, sl.name, sl.id, lane, 0});
  }
}

// Puts the async events of the reference on the tracks the table gave
// their groups ("async<g>").
inline void ResolveAsyncTracks(const Table& t, Trace* tr) {
  std::map<std::string, uint32_t> by_name;
  for (const proto::Track& track : t.resources().tracks()) {
    if (track.kind() == proto::Track::ASYNC) by_name[track.name()] = track.id();
  }
  for (RefEvent& e : tr->events) {
    if (e.track < kAsyncGroup) continue;
    auto it = by_name.find("async" + std::to_string(e.track - kAsyncGroup));
    ASSERT_NE(it, by_name.end()) << "no track for async group " << e.track - kAsyncGroup;
    e.track = it->second;
  }
  tr->counter_track.resize(t.resources().tracks_size());
}

// Random trace: nested and overlapping slices with long-tailed durations,
// zero-length slices, a burst of 1000 events at one time, instants, flows and
// counters, on a few tracks.
inline Trace MakeTrace(uint32_t seed, TableBuilder* b) {
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
    if (kind == EventKind::kFlowStart) e.flow_id = b->Intern(absl::StrCat("f", rng() % 50));
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
  AddAsyncNests(rng, b, names, span, &id, &tr);
  // Lanes, as the builder lays them out: per track in (ts, -dur, id) order
  // (async nests have theirs already).
  std::vector<RefEvent*> order;
  for (RefEvent& e : tr.events) {
    if (e.track < kAsyncGroup) order.push_back(&e);
  }
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

// MakeTrace(seed) written to a table in its own TempDir and opened; Build()
// reports failures through gtest (check HasFatalFailure() or the result).
struct RandomTable {
  TempDir dir;
  Trace trace;
  std::unique_ptr<Table> table;

  bool Build(uint32_t seed, uint64_t memory_budget = 1ull << 30,
             uint64_t stats_bucket_events = BuildOptions{}.stats_bucket_events) {
    BuildOptions opts;
    opts.output = dir.Sub("t.tracetable");
    opts.memory_budget = memory_budget;
    opts.stats_bucket_events = stats_bucket_events;
    auto builder = TableBuilder::Create(opts);
    EXPECT_TRUE(builder.ok()) << builder.status();
    if (!builder.ok()) return false;
    trace = MakeTrace(seed, builder->get());
    absl::Status finished = (*builder)->Finish();
    EXPECT_TRUE(finished.ok()) << finished;
    if (!finished.ok()) return false;
    auto opened = Table::Open(opts.output);
    EXPECT_TRUE(opened.ok()) << opened.status();
    if (!opened.ok()) return false;
    table = std::move(*opened);
    ResolveAsyncTracks(*table, &trace);
    return !::testing::Test::HasFatalFailure();
  }
};

}  // namespace tracetable::testing

#endif  // TRACETABLE_TESTS_QUERY_RANDOM_TRACE_H_
