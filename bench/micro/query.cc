// Micro-benchmarks of the query hot paths on a small generated table
// (about 200k events on 8 thread tracks and a counter, spanning 100 ms):
//  - BM_QueryWindow: window assembly (query/window.h QueryWindow), all tracks
//    or one, at three zooms (whole span, 1%, 0.01%; resolution = width/2000);
//  - BM_AppendWindowJson: the Chrome-JSON answer text (query/trace_json.h) of
//    the same answers, without the query.
// The table is built once per process under /tmp and removed at exit; the
// LevelDB block cache is warm after the first iteration, as in a server.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>

#include "query/trace_json.h"
#include "query/window.h"
#include "store/table.h"
#include "store/table_builder.h"

namespace tracetable {
namespace {

constexpr int64_t kSpan = int64_t{100'000'000'000};  // ps: 100 ms
constexpr int kThreads = 8;

absl::Status Build(const std::string& path) {
  BuildOptions opts;
  opts.output = path;
  opts.overwrite = true;
  absl::StatusOr<std::unique_ptr<TableBuilder>> b = TableBuilder::Create(opts);
  if (!b.ok()) return b.status();
  TableBuilder& builder = **b;
  builder.BeginInput("micro", "");
  if (absl::StatusOr<int64_t> origin = builder.ToRelativePs(0, 0); !origin.ok()) return origin.status();
  std::mt19937_64 rng(3);
  std::vector<uint32_t> names;
  for (int i = 0; i < 40; ++i) names.push_back(builder.Intern("op" + std::to_string(i)));
  std::lognormal_distribution<double> dur(std::log(4e6), 1.9);  // ps, median 4 us
  for (int t = 0; t < kThreads; ++t) {
    const std::string tid = std::to_string(t + 1);
    const uint32_t track = builder.ThreadTrack({"1", true}, {tid, true});
    // Top-level ops back to back with gaps, each split into nested children.
    for (int64_t ts = 0; ts < kSpan;) {
      Event e;
      e.track = track;
      e.ts = ts;
      e.dur = std::min<int64_t>(static_cast<int64_t>(dur(rng)), kSpan / 10);
      e.name = names[rng() % names.size()];
      if (absl::Status s = builder.Add(e); !s.ok()) return s;
      int64_t child = ts, d = e.dur;
      for (int depth = 0; depth < 2 && d > 8; ++depth) {
        d /= 3;
        child += d / 2;
        Event c = e;
        c.ts = child;
        c.dur = d;
        c.name = names[rng() % names.size()];
        if (absl::Status s = builder.Add(c); !s.ok()) return s;
      }
      ts += e.dur + static_cast<int64_t>(rng() % 3'000'000) + 1;
    }
  }
  const uint32_t counter = builder.CounterTrack({"1", true}, "mem", "bytes");
  for (int64_t ts = 0; ts < kSpan; ts += 10'000'000) {
    Event e;
    e.kind = EventKind::kCounter;
    e.track = counter;
    e.ts = ts;
    e.name = builder.Intern("mem");
    e.value = static_cast<double>(rng() % 1'000'000);
    if (absl::Status s = builder.Add(e); !s.ok()) return s;
  }
  return builder.Finish();
}

// Never destroyed, so the exit handler can still read its path.
const Table* TheTable() {
  static const Table* table = [] () -> const Table* {
    const std::string path = "/tmp/tt_micro_query_" + std::to_string(getpid()) + ".tracetable";
    static const std::string remove_path = path;
    std::atexit([] { std::filesystem::remove_all(remove_path); });
    if (absl::Status s = Build(path); !s.ok()) {
      std::fprintf(stderr, "building %s: %s\n", path.c_str(), std::string(s.message()).c_str());
      return nullptr;
    }
    absl::StatusOr<std::unique_ptr<Table>> t = Table::Open(path);
    if (!t.ok()) return nullptr;
    return t->release();
  }();
  return table;
}

// range(0): 1/fraction of the span the window covers; range(1): one track.
WindowRequest Request(const benchmark::State& state, int i) {
  const int64_t width = kSpan / state.range(0);
  WindowRequest req;
  // A few fixed positions, so the answer sizes do not depend on one spot.
  const int64_t slots = std::max<int64_t>(1, (kSpan - width) / 7);
  req.start = (i % 8) * slots;
  req.end = req.start + width;
  req.resolution = width / 2000;
  if (state.range(1)) req.tracks = {2};
  return req;
}

void BM_QueryWindow(benchmark::State& state) {
  const Table* t = TheTable();
  if (!t) {
    state.SkipWithError("no table");
    return;
  }
  int i = 0;
  uint64_t items = 0;
  for (auto _ : state) {
    absl::StatusOr<WindowResult> r = QueryWindow(*t, Request(state, i++));
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      break;
    }
    items += r->items.size();
  }
  state.SetItemsProcessed(static_cast<int64_t>(items));
  state.counters["items"] = benchmark::Counter(static_cast<double>(items) / static_cast<double>(std::max<int64_t>(1, i)));
}

void BM_AppendWindowJson(benchmark::State& state) {
  const Table* t = TheTable();
  if (!t) {
    state.SkipWithError("no table");
    return;
  }
  std::vector<std::pair<WindowRequest, WindowResult>> answers;
  for (int i = 0; i < 8; ++i) {
    WindowRequest req = Request(state, i);
    absl::StatusOr<WindowResult> r = QueryWindow(*t, req);
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
    answers.emplace_back(req, *std::move(r));
  }
  int i = 0;
  uint64_t bytes = 0, items = 0;
  std::string out;
  for (auto _ : state) {
    const auto& [req, result] = answers[i++ % answers.size()];
    out.clear();
    if (!AppendWindowJson(*t, req, result, TraceJsonOptions(), &out).ok()) state.SkipWithError("damaged table");
    bytes += out.size();
    items += result.items.size();
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.SetItemsProcessed(static_cast<int64_t>(items));
}

void Zooms(benchmark::internal::Benchmark* b) {
  b->ArgNames({"span_div", "one_track"});
  for (int one : {0, 1}) {
    for (int div : {1, 100, 10000}) b->Args({div, one});
  }
  b->Unit(benchmark::kMicrosecond);
}
BENCHMARK(BM_QueryWindow)->Apply(Zooms);
BENCHMARK(BM_AppendWindowJson)->Apply(Zooms);

}  // namespace
}  // namespace tracetable
