// Micro-benchmark: the XSpace reader (ingest/xspace/reader.h) alone, on the
// real profile in ../shared/traces/xspace/, into a sink that answers every
// call with a constant and keeps nothing, so the time is the reader's:
// protobuf decoding, arenas, and the args JSON it writes per event.
// Each iteration reads the whole file; counters give events and args bytes.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

#include "ingest/xspace/reader.h"

namespace tracetable {
namespace {

class NullSink : public MetadataDroppingSink {
 public:
  void BeginInput(std::string_view, std::string_view) override {}
  uint32_t Intern(std::string_view s) override {
    return static_cast<uint32_t>(s.size());
  }
  absl::StatusOr<int64_t> ToRelativePs(int64_t ns, int32_t ps) override {
    return ns * 1000 + ps;
  }
  uint32_t ThreadTrack(IdToken, IdToken) override { return 1; }
  uint32_t CounterTrack(IdToken, std::string_view, std::string_view) override {
    return 2;
  }
  uint32_t AsyncTrack(IdToken, std::string_view) override { return 3; }
  uint32_t InstantTrack(IdToken, bool) override { return 4; }
  absl::Status Add(const Event& e) override {
    ++events;
    args_bytes += e.args_json.size();
    return absl::OkStatus();
  }
  void CountSkipped(std::string_view, uint64_t) override {}
  void Warn(std::string_view) override {}

  uint64_t events = 0, args_bytes = 0;
};

void BM_ReadRealXSpace(benchmark::State& state) {
  const std::string path =
      std::string(TT_SHARED_TRACES) +
      "/xspace/gpu_multi_worker_host179.xplane.pb";
  uint64_t events = 0;
  for (auto _ : state) {
    NullSink sink;
    if (absl::Status s = ReadXSpace(path, "", &sink); !s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
    events = sink.events;
    benchmark::DoNotOptimize(sink.args_bytes);
  }
  state.counters["events"] = static_cast<double>(events);
  state.counters["ns_per_event"] = benchmark::Counter(
      static_cast<double>(events) * state.iterations(),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ReadRealXSpace)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tracetable
