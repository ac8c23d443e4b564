// FlowIndexWriter (store/flow_index_writer.h) writes, for every flow id in
// an events tile, one posting per (flow, tile) in key order: checked against
// a brute-force index of random tiles. Split over several writers, with
// postings spilled and tiles added from several threads, it writes exactly
// what one writer writes in memory: the same keys and values, each writer's
// keys ascending and after the previous writer's.
#include "store/flow_index_writer.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "format/keys.h"
#include "format/tracetable.pb.h"
#include "gtest/gtest.h"

namespace tracetable {
namespace {

struct TestTile {
  TileKey key;
  std::vector<TileRow> rows;
};

// Flow ids over ~20 blocks, low ids commoner; every tile key distinct.
std::vector<TestTile> RandomTiles(uint32_t seed, int n) {
  std::mt19937 rng(seed);
  auto flow = [&]() -> uint32_t { return 1 + (rng() % 3 == 0 ? rng() % 5000 : rng() % 300); };
  std::vector<TestTile> tiles(n);
  for (int i = 0; i < n; ++i) {
    TestTile& t = tiles[i];
    t.key.track = rng() % 7;
    t.key.level = rng() % 3;
    t.key.start = uint64_t{static_cast<uint32_t>(n - i)} * 100 + rng() % 50;  // added out of key order
    const int rows = 1 + rng() % 30;
    for (int r = 0; r < rows; ++r) {
      TileRow row;
      switch (rng() % 4) {
        case 0:
          row.kind = EventKind::kFlowStart;
          row.flow_id = flow();
          break;
        case 1:
          row.kind = EventKind::kSlice;
          row.flow_out = rng() % 2 ? flow() : 0;
          row.flow_in = rng() % 2 ? flow() : 0;
          break;
        case 2:
          row.kind = EventKind::kSlice;  // its flow_id is not a flow's
          row.flow_id = flow();
          break;
        default:
          row.kind = EventKind::kCounter;
          break;
      }
      t.rows.push_back(row);
    }
  }
  return tiles;
}

using TileOrder = std::tuple<uint32_t, uint32_t, uint64_t>;  // track, level, start

std::map<uint32_t, std::set<TileOrder>> BruteForce(const std::vector<TestTile>& tiles) {
  std::map<uint32_t, std::set<TileOrder>> index;
  for (const TestTile& t : tiles) {
    const TileOrder key{t.key.track, t.key.level, t.key.start};
    for (const TileRow& r : t.rows) {
      if (r.kind == EventKind::kFlowStart && r.flow_id) index[r.flow_id].insert(key);
      if (r.flow_out) index[r.flow_out].insert(key);
      if (r.flow_in) index[r.flow_in].insert(key);
    }
  }
  return index;
}

struct Written {
  std::vector<std::vector<std::pair<std::string, std::string>>> by_writer;
  proto::FlowIndexInfo info;
};

Written Write(const std::vector<TestTile>& tiles, int writers, int threads, size_t memory) {
  const std::string prefix = ::testing::TempDir() + "/flow_index_writer_test." + std::to_string(getpid());
  FlowIndexWriter w(prefix, 1 << 20);
  EXPECT_TRUE(w.SetMemory(memory).ok());
  std::vector<std::thread> adders;
  for (int t = 0; t < threads; ++t) {
    adders.emplace_back([&, t] {
      for (size_t i = t; i < tiles.size(); i += threads) EXPECT_TRUE(w.AddTile(tiles[i].key, tiles[i].rows).ok());
    });
  }
  for (std::thread& a : adders) a.join();
  Written out;
  out.by_writer.resize(writers);
  std::vector<FlowIndexWriter::PutFn> puts;
  for (int p = 0; p < writers; ++p) {
    puts.push_back([&out, p](std::string k, std::string v) {
      out.by_writer[p].emplace_back(std::move(k), std::move(v));
      return absl::OkStatus();
    });
  }
  EXPECT_TRUE(w.Finish(1 << 20, puts, &out.info).ok());
  return out;
}

std::vector<std::pair<std::string, std::string>> All(const Written& w) {
  std::vector<std::pair<std::string, std::string>> all;
  for (const auto& part : w.by_writer) all.insert(all.end(), part.begin(), part.end());
  return all;
}

TEST(FlowIndexWriter, PostsEveryFlowOfEveryTileInKeyOrder) {
  const std::vector<TestTile> tiles = RandomTiles(1, 3000);
  const std::map<uint32_t, std::set<TileOrder>> expected = BruteForce(tiles);
  const Written w = Write(tiles, 1, 1, 64 << 20);
  std::set<uint32_t> blocks;
  for (const auto& [flow, unused] : expected) blocks.insert(flow >> kFlowBlockShift);
  const auto written = All(w);
  ASSERT_EQ(written.size(), blocks.size());
  std::map<uint32_t, std::vector<TileOrder>> got;
  uint64_t postings = 0;
  auto block_id = blocks.begin();
  for (const auto& [key, value] : written) {
    const uint32_t base = *block_id++ << kFlowBlockShift;
    ASSERT_EQ(key, FlowBlockKey(base >> kFlowBlockShift));
    proto::FlowTiles block;
    ASSERT_TRUE(block.ParseFromString(value));
    ASSERT_EQ(block.slot_size(), block.count_size());
    int row = 0;
    for (int s = 0; s < block.slot_size(); ++s) {
      for (uint32_t c = 0; c < block.count(s); ++c, ++row) {
        ASSERT_LT(row, block.track_size());
        got[base | block.slot(s)].emplace_back(block.track(row), block.level(row), block.start(row));
        ++postings;
      }
    }
    ASSERT_EQ(row, block.track_size());
  }
  ASSERT_EQ(got.size(), expected.size());
  for (const auto& [flow, tiles_of_flow] : expected) {
    EXPECT_EQ(got[flow], std::vector<TileOrder>(tiles_of_flow.begin(), tiles_of_flow.end())) << "flow " << flow;
  }
  EXPECT_EQ(w.info.flows(), expected.size());
  EXPECT_EQ(w.info.postings(), postings);
  EXPECT_EQ(w.info.blocks(), written.size());
  EXPECT_GT(w.info.blocks(), 10u);  // the split below has blocks to split
}

TEST(FlowIndexWriter, SplitSpilledOrFromThreadsWritesTheSame) {
  const std::vector<TestTile> tiles = RandomTiles(2, 3000);
  const Written one = Write(tiles, 1, 1, 64 << 20);
  for (int writers : {1, 2, 3, 5}) {
    for (size_t memory : {size_t{64} << 20, size_t{8} << 10}) {  // 8 KiB: 1024 postings, spilled
      for (int threads : {1, 3}) {
        const Written w = Write(tiles, writers, threads, memory);
        const std::string what = "writers " + std::to_string(writers) + " memory " + std::to_string(memory) +
                                 " threads " + std::to_string(threads);
        EXPECT_EQ(All(w), All(one)) << what;
        EXPECT_EQ(w.info.SerializeAsString(), one.info.SerializeAsString()) << what;
        std::string last;
        int nonempty = 0;
        for (const auto& part : w.by_writer) {
          nonempty += !part.empty();
          for (const auto& [key, value] : part) {
            EXPECT_LT(last, key) << what;
            last = key;
          }
        }
        // Shares are whole blocks, so a heavy block may leave one empty.
        EXPECT_GE(nonempty, std::min(writers, 3)) << what;
      }
    }
  }
}

}  // namespace
}  // namespace tracetable
