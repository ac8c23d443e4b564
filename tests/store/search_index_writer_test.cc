// SearchIndexWriter (store/search_index_writer.h) split into partitions by
// name range writes exactly what one partition writes: the same keys and
// values, each partition's keys ascending and after the previous one's, and
// the same summary, whatever the weights (skewed, one heavy name, none,
// names beyond them) and with tiles added from several threads. And what one
// writes holds one posting per (name, tile) with an indexed event, rare
// names' in name groups and the others' in chunks.
#include "store/search_index_writer.h"

#include <unistd.h>

#include <filesystem>
#include <set>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "format/keys.h"
#include "format/search_group_codec.h"
#include "format/tracetable.pb.h"
#include "gtest/gtest.h"

namespace tracetable {
namespace {

struct TestTile {
  TileKey key;
  std::vector<TileRow> rows;
};

std::vector<TestTile> RandomTiles(uint32_t seed, int n, uint32_t names) {
  std::mt19937 rng(seed);
  std::vector<TestTile> tiles(n);
  for (int i = 0; i < n; ++i) {
    TestTile& t = tiles[i];
    t.key.track = rng() % 5;
    t.key.level = rng() % 3;
    t.key.start = uint64_t{static_cast<uint32_t>(i)} * 100 + rng() % 50;
    const int rows = 1 + rng() % 40;
    for (int r = 0; r < rows; ++r) {
      TileRow row;
      row.kind = rng() % 10 == 0 ? EventKind::kCounter : EventKind::kSlice;
      // Skewed: low ids are common, as names seen first are in traces.
      row.name = rng() % 3 == 0 ? rng() % names : rng() % 8;
      row.ts = static_cast<int64_t>(t.key.start) + r;
      row.dur = rng() % 5000;
      t.rows.push_back(row);
    }
  }
  return tiles;
}

struct Written {
  // What each writer got: the partitions' chunk writers, then their group
  // writers.
  std::vector<std::vector<std::pair<std::string, std::string>>> by_part;
  proto::SearchIndexInfo info;
};

Written Write(const std::vector<TestTile>& tiles, const std::vector<uint32_t>* weights, int parts,
              int threads, const std::string& prefix, size_t memory) {
  SearchIndexWriter w(prefix, memory);
  if (weights) w.Partition(*weights, parts);
  std::vector<std::thread> adders;
  for (int t = 0; t < threads; ++t) {
    adders.emplace_back([&, t] {
      SearchIndexWriter::Scratch scratch;
      for (size_t i = t; i < tiles.size(); i += threads) {
        EXPECT_TRUE(w.AddTile(tiles[i].key, static_cast<int64_t>(tiles[i].key.start), tiles[i].rows, &scratch).ok());
      }
    });
  }
  for (std::thread& a : adders) a.join();
  Written out;
  out.by_part.resize(2 * w.partitions());
  std::vector<SearchIndexWriter::PutFn> puts, group_puts;
  for (int p = 0; p < 2 * w.partitions(); ++p) {
    (p < w.partitions() ? puts : group_puts).push_back([&out, p](std::string k, std::string v) {
      out.by_part[p].emplace_back(std::move(k), std::move(v));
      return absl::OkStatus();
    });
  }
  EXPECT_TRUE(w.Finish(1 << 20, puts, group_puts, &out.info).ok());
  return out;
}

std::string Prefix(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/search_index_writer_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  return dir + "/" + name;
}

// The own postings (not carried) of every chunk and name group; checks that
// chunks ascend and that no name has both.
uint64_t OwnPostings(const std::vector<std::pair<std::string, std::string>>& written, uint64_t* grouped_names) {
  uint64_t own = 0;
  std::set<uint32_t> chunked, grouped;
  for (const auto& [key, value] : written) {
    if (key.empty()) continue;
    if (key[0] == kSearchGroupPrefix) {
      std::vector<SearchGroupEntry> entries;
      EXPECT_TRUE(DecodeSearchNameGroup(GetBigEndian32(key.data() + 1), value, &entries).ok()) << key;
      for (const SearchGroupEntry& e : entries) {
        grouped.insert(e.name);
        own += e.ranks.size();
      }
    }
    if (key[0] != kSearchPrefix) continue;
    chunked.insert(GetBigEndian32(key.data() + 1));
    proto::SearchPostings c;
    EXPECT_TRUE(c.ParseFromString(value));
    EXPECT_LE(c.carried(), static_cast<uint32_t>(c.rank_delta_size()));
    for (int i = 1; i < c.rank_delta_size(); ++i) EXPECT_GT(c.rank_delta(i), 0u) << key;
    own += c.rank_delta_size() - c.carried();
  }
  for (uint32_t name : grouped) EXPECT_FALSE(chunked.contains(name)) << name;
  *grouped_names = grouped.size();
  return own;
}

TEST(SearchIndexWriter, OnePostingPerNameAndTile) {
  const std::vector<TestTile> tiles = RandomTiles(11, 3000, 500);
  std::set<std::pair<uint32_t, size_t>> want;
  for (size_t i = 0; i < tiles.size(); ++i) {
    for (const TileRow& r : tiles[i].rows) {
      if (r.kind != EventKind::kCounter && r.name != 0) want.emplace(r.name, i);
    }
  }
  const Written one = Write(tiles, nullptr, 1, 2, Prefix("count"), 1 << 20);
  uint64_t grouped = 0;
  std::vector<std::pair<std::string, std::string>> written = one.by_part[0];
  written.insert(written.end(), one.by_part[1].begin(), one.by_part[1].end());
  EXPECT_EQ(OwnPostings(written, &grouped), want.size());
  EXPECT_EQ(one.info.postings(), want.size());
  // The 8 common names have keys of their own, the rare ones are grouped.
  EXPECT_GT(one.info.chunks(), 8u);
  EXPECT_GT(one.info.groups(), 0u);
  EXPECT_GT(grouped, 400u);
}

TEST(SearchIndexWriter, PartitionsWriteWhatOneWrites) {
  constexpr uint32_t kNames = 3000;
  const std::vector<TestTile> tiles = RandomTiles(7, 4000, kNames);
  // Single-threaded, one partition: the reference (tile order is by calls,
  // the output by rank, so threads change nothing either).
  const Written one = Write(tiles, nullptr, 1, 1, Prefix("one"), 1 << 20);
  std::vector<std::pair<std::string, std::string>> want = one.by_part[0];  // "D", "N"
  want.insert(want.end(), one.by_part[1].begin(), one.by_part[1].end());   // "P"
  ASSERT_GT(one.info.chunks(), 0u);

  std::vector<uint32_t> skewed(kNames, 1);
  for (uint32_t n = 0; n < 8; ++n) skewed[n] = 1000;
  std::vector<uint32_t> heavy(kNames, 0);
  heavy[3] = 1;
  const std::vector<uint32_t> none;
  const std::vector<uint32_t> short_list(10, 5);  // names past 10 weigh 0
  int case_no = 0;
  for (const std::vector<uint32_t>* weights :
       std::vector<const std::vector<uint32_t>*>{&skewed, &heavy, &none, &short_list}) {
    for (int parts : {1, 2, 3, 4}) {
      // A small budget spills each partition's sorter.
      for (size_t memory : {size_t{1} << 20, size_t{4096}}) {
        SCOPED_TRACE(testing::Message() << "case " << case_no << " parts " << parts << " memory " << memory);
        const Written got = Write(tiles, weights, parts, 3, Prefix(absl::StrCat("p", case_no++)), memory);
        ASSERT_EQ(got.by_part.size(), 2 * static_cast<size_t>(parts));
        // Each writer's keys ascend, and each key space's keys ascend
        // across the partitions in order, so their files do not overlap.
        std::map<char, std::vector<std::pair<std::string, std::string>>> by_space;
        for (const auto& part : got.by_part) {
          for (size_t i = 0; i < part.size(); ++i) {
            if (i > 0) {
              ASSERT_LT(part[i - 1].first, part[i].first);
            }
            auto& space = by_space[part[i].first[0]];
            if (!space.empty()) {
              ASSERT_LT(space.back().first, part[i].first);
            }
            space.push_back(part[i]);
          }
        }
        std::vector<std::pair<std::string, std::string>> all;
        for (const auto& [prefix, space] : by_space) all.insert(all.end(), space.begin(), space.end());
        EXPECT_EQ(all, want);
        EXPECT_EQ(got.info.SerializeAsString(), one.info.SerializeAsString());
      }
    }
  }
  // The skewed weights split the work: no partition holds everything.
  const Written split = Write(tiles, &skewed, 2, 1, Prefix("split"), 1 << 20);
  EXPECT_GT(split.by_part[1].size(), 0u);
  EXPECT_GT(split.by_part[0].size(), 1u);
}

}  // namespace
}  // namespace tracetable
