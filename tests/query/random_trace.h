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
#include <random>
#include <string>
#include <tuple>
#include <vector>

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

// MakeTrace(seed) written to a table in its own TempDir and opened; Build()
// reports failures through gtest (check HasFatalFailure() or the result).
struct RandomTable {
  TempDir dir;
  Trace trace;
  std::unique_ptr<Table> table;

  bool Build(uint32_t seed, uint64_t memory_budget = 1ull << 30) {
    BuildOptions opts;
    opts.output = dir.Sub("t.tracetable");
    opts.memory_budget = memory_budget;
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
    return true;
  }
};

}  // namespace tracetable::testing

#endif  // TRACETABLE_TESTS_QUERY_RANDOM_TRACE_H_
