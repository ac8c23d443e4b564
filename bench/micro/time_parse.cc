// Micro-benchmark: exact microsecond-text <-> time conversion (format/time.h),
// which the JSON reader runs for every ts and dur.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "format/time.h"

namespace {

std::vector<std::string> Inputs(bool epoch) {
  std::vector<std::string> v;
  uint64_t x = 88172645463325252ull;
  for (int i = 0; i < 4096; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const uint64_t ns = (epoch ? 1'700'000'000'000'000'000ull : 0) + x % 10'000'000'000ull;
    std::string s = std::to_string(ns / 1000);
    if (ns % 1000) {
      char frac[5];
      std::snprintf(frac, sizeof frac, ".%03u", unsigned(ns % 1000));
      s += frac;
    }
    v.push_back(s);
  }
  return v;
}

void BM_ParseMicros(benchmark::State& state) {
  const auto in = Inputs(state.range(0) != 0);
  size_t i = 0;
  for (auto _ : state) {
    auto r = tracetable::ParseMicros(in[i++ & 4095]);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ParseMicros)->Arg(0)->Arg(1)->ArgName("epoch");

void BM_FormatMicros(benchmark::State& state) {
  __int128 ps = static_cast<__int128>(1'700'000'000'000'000'000ll) * 1000;
  for (auto _ : state) {
    ps += 123'456'789;
    auto s = tracetable::FormatMicros(ps);
    benchmark::DoNotOptimize(s);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FormatMicros);

}  // namespace
