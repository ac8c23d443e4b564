// Micro-benchmark: encoding one block of event arguments
// (format/args_codec.h), which the building thread of every ingest does
// for each event with arguments — on Kineto-shaped input, the thread the
// parse waits for. Entries are Kineto's: kernels (a dozen fields, ints,
// floats, arrays), runtime calls (three ints), some pretty-printed.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "format/args_codec.h"

namespace tracetable {
namespace {

std::vector<ArgsEntry> KinetoBlock(bool pretty) {
  std::vector<ArgsEntry> entries;
  for (uint32_t slot = 0; slot < 256; ++slot) {
    const int id = 140000 + static_cast<int>(slot) * 8;
    std::string json;
    if (slot % 2 == 0) {
      json = absl::StrCat(R"({"External id":)", id, R"(,"queued":0,"device":1,"context":1,"stream":7,)",
                          R"("correlation":)", id, R"(,"registers per thread":20,"shared memory":0,)",
                          R"("blocks per SM":88.1,"warps per SM":352.4,"grid":[7048,1,1],"block":[128,1,1],)",
                          R"("est. achieved occupancy %":100})");
    } else if (pretty) {
      json = absl::StrCat("{\n    \"External id\": ", id, ",\n    \"cbid\": 211, \"correlation\": ", id, "\n  }");
    } else {
      json = absl::StrCat(R"({"External id":)", id, R"(,"cbid":211,"correlation":)", id, "}");
    }
    entries.push_back(ArgsEntry{slot, std::move(json)});
  }
  return entries;
}

void BM_EncodeArgsBlock(benchmark::State& state) {
  const std::vector<ArgsEntry> entries = KinetoBlock(state.range(0) != 0);
  size_t in = 0;
  for (const ArgsEntry& e : entries) in += e.json.size();
  ArgsBlockEncoder encoder;
  size_t bytes = 0;
  for (auto _ : state) {
    for (const ArgsEntry& e : entries) encoder.Add(e.slot, e.json);
    std::string block = encoder.Finish();
    bytes = block.size();
    benchmark::DoNotOptimize(block);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * entries.size()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * in));
  state.counters["block_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_EncodeArgsBlock)->Arg(0)->Arg(1)->ArgName("pretty");

// The same through EncodeArgsBlock(entries): a fresh encoder per block, as
// when begin/end arguments are merged.
void BM_EncodeArgsBlockFresh(benchmark::State& state) {
  const std::vector<ArgsEntry> entries = KinetoBlock(state.range(0) != 0);
  for (auto _ : state) {
    std::string block = EncodeArgsBlock(entries);
    benchmark::DoNotOptimize(block);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * entries.size()));
}
BENCHMARK(BM_EncodeArgsBlockFresh)->Arg(0)->Arg(1)->ArgName("pretty");

}  // namespace
}  // namespace tracetable
