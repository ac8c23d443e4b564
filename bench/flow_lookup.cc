// tt_flow_lookup: latency of following a flow (query/flow_ends.h) on a real
// table. Samples flow ids from the table's flow index, then times
// FindFlowEnds for each in a fresh Table (first lookups: block cache empty,
// OS page cache as it is) and again (warm), and prints the median, p90 and
// max in µs with the tiles read.
//   tt_flow_lookup TABLE [--samples N] [--seed S]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "format/keys.h"
#include "leveldb/iterator.h"
#include "query/flow_ends.h"
#include "store/table.h"

namespace tracetable {
namespace {

// Every flow id in the index (a bench may scan it; lookups never do).
std::vector<uint32_t> AllFlows(const Table& t) {
  std::vector<uint32_t> out;
  std::unique_ptr<leveldb::Iterator> it = t.NewIterator();
  for (it->Seek(std::string(1, kFlowPrefix)); it->Valid() && it->key()[0] == kFlowPrefix; it->Next()) {
    proto::FlowTiles block;
    if (!CheckFlowTiles(t, std::string_view(it->value().data(), it->value().size()), &block).ok()) std::exit(1);
    const uint32_t base = GetBigEndian32(it->key().data() + 1) << kFlowBlockShift;
    for (uint32_t slot : block.slot()) out.push_back(base + slot);
  }
  return out;
}

void Report(const char* what, std::vector<double> us, const std::vector<uint64_t>& tiles) {
  std::sort(us.begin(), us.end());
  const uint64_t max_tiles = *std::max_element(tiles.begin(), tiles.end());
  double sum = 0;
  for (uint64_t x : tiles) sum += static_cast<double>(x);
  std::printf("%-6s n=%zu median %.1f us, p90 %.1f us, max %.1f us; tiles read mean %.1f, max %llu\n", what,
              us.size(), us[us.size() / 2], us[us.size() * 9 / 10], us.back(), sum / static_cast<double>(tiles.size()),
              static_cast<unsigned long long>(max_tiles));
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: tt_flow_lookup TABLE [--samples N] [--seed S]\n");
    return 2;
  }
  size_t samples = 200;
  unsigned seed = 1;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--samples")) samples = std::strtoul(argv[i + 1], nullptr, 10);
    if (!std::strcmp(argv[i], "--seed")) seed = static_cast<unsigned>(std::strtoul(argv[i + 1], nullptr, 10));
  }
  std::vector<uint32_t> flows;
  {
    absl::StatusOr<std::unique_ptr<Table>> t = Table::Open(argv[1]);
    if (!t.ok()) {
      std::fprintf(stderr, "%s\n", std::string(t.status().message()).c_str());
      return 1;
    }
    flows = AllFlows(**t);
    const proto::FlowIndexInfo& fi = (*t)->meta().flow_index();
    std::printf("%s: %llu events, %zu flow ids in the index (%llu postings, %llu keys, %llu bytes)\n", argv[1],
                static_cast<unsigned long long>((*t)->meta().num_events()), flows.size(),
                static_cast<unsigned long long>(fi.postings()), static_cast<unsigned long long>(fi.blocks()),
                static_cast<unsigned long long>(fi.bytes()));
  }
  if (flows.empty()) return 1;
  std::mt19937 rng(seed);
  std::shuffle(flows.begin(), flows.end(), rng);
  flows.resize(std::min(samples, flows.size()));
  absl::StatusOr<std::unique_ptr<Table>> t = Table::Open(argv[1]);  // a fresh block cache
  if (!t.ok()) return 1;
  for (const char* pass : {"first", "warm"}) {
    std::vector<double> us;
    std::vector<uint64_t> tiles;
    for (uint32_t f : flows) {
      ReadStats stats;
      const auto a = std::chrono::steady_clock::now();
      absl::StatusOr<std::vector<FlowEnd>> ends = FindFlowEnds(**t, f, &stats);
      const auto b = std::chrono::steady_clock::now();
      if (!ends.ok() || ends->empty()) {
        std::fprintf(stderr, "flow %u: no ends\n", f);
        return 1;
      }
      us.push_back(std::chrono::duration<double, std::micro>(b - a).count());
      tiles.push_back(stats.tiles);
    }
    Report(pass, us, tiles);
  }
  return 0;
}

}  // namespace
}  // namespace tracetable

int main(int argc, char** argv) { return tracetable::Main(argc, argv); }
