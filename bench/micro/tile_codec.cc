// Micro-benchmark: encoding and decoding one tile (format/tile_codec.h), the
// work every ingest writes and every window read pays per tile. Rows look
// like the generator's XLA ops: increasing ts with gaps, long-tailed
// durations, a few dozen names, nesting lanes 0..3; full tiles of
// kMaxRowsPerTile rows.
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "format/levels.h"
#include "format/tile_codec.h"

namespace tracetable {
namespace {

std::vector<TileRow> Rows(bool summary) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dur(std::log(4e6), 1.9);  // ps, median 4 us
  std::vector<TileRow> rows(kMaxRowsPerTile);
  int64_t ts = 1'000'000'000;
  uint64_t id = 5000;
  for (TileRow& r : rows) {
    ts += static_cast<int64_t>(rng() % 3'000'000);
    r.ts = ts;
    r.dur = static_cast<int64_t>(dur(rng));
    r.name = 1 + static_cast<uint32_t>(rng() % 40);
    r.cat = 1 + static_cast<uint32_t>(rng() % 3);
    r.lane = static_cast<uint32_t>(rng() % 4);
    r.id = id += 1 + rng() % 3;
    if (summary) {
      r.count = 2 + rng() % 50;
      r.covered = static_cast<uint64_t>(r.dur) / 2;
      r.longest_dur = r.dur / 3;
    }
  }
  return rows;
}

void BM_EncodeTile(benchmark::State& state) {
  const bool summary = state.range(0) != 0;
  const std::vector<TileRow> rows = Rows(summary);
  size_t bytes = 0;
  for (auto _ : state) {
    std::string tile = EncodeTile(rows, rows.front().ts, summary);
    bytes = tile.size();
    benchmark::DoNotOptimize(tile);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * rows.size()));
  state.counters["tile_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_EncodeTile)->Arg(0)->Arg(1)->ArgName("summary");

void BM_DecodeTile(benchmark::State& state) {
  const bool summary = state.range(0) != 0;
  const std::vector<TileRow> rows = Rows(summary);
  const std::string tile = EncodeTile(rows, rows.front().ts, summary);
  std::vector<TileRow> out;
  for (auto _ : state) {
    out.clear();
    if (!DecodeTile(tile, rows.front().ts, &out).ok() || out.size() != rows.size()) {
      state.SkipWithError("DecodeTile failed");
      break;
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * rows.size()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * tile.size()));
}
BENCHMARK(BM_DecodeTile)->Arg(0)->Arg(1)->ArgName("summary");

}  // namespace
}  // namespace tracetable
