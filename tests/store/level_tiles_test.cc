// LevelTiles (store/level_tiles.h) gives a track's tiles level by level,
// each level's in the order added, whether they waited in memory, in files
// (a limit far below their bytes) or both, and leaves no file behind.
#include "store/level_tiles.h"

#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace tracetable {
namespace {

namespace fs = std::filesystem;

using Tile = std::pair<std::string, std::string>;

class LevelTilesTest : public testing::Test {
 protected:
  void SetUp() override { fs::create_directories(dir_); }
  void TearDown() override { fs::remove_all(dir_); }
  size_t Files() const { return static_cast<size_t>(std::distance(fs::directory_iterator(dir_), {})); }
  const fs::path dir_ = fs::temp_directory_path() / ("tt_level_tiles_" + std::to_string(getpid()));
};

TEST_F(LevelTilesTest, GivesLevelAfterLevelInOrderAddedWhereverTheyWaited) {
  for (size_t limit : {size_t{1} << 30, size_t{5000}, size_t{1}}) {
    SCOPED_TRACE(testing::Message() << "limit " << limit);
    LevelTiles tiles((dir_ / "w0").string(), limit);
    // Two tracks through the same LevelTiles, as a worker's.
    for (int track = 0; track < 2; ++track) {
      std::mt19937 rng(7 + track);
      std::vector<std::vector<Tile>> want(6);
      for (int i = 0; i < 3000; ++i) {
        const uint32_t level = rng() % 6;
        // Values of every size, some empty, some with zero bytes.
        Tile t{absl::StrCat("key", track, "/", level, "/", i), std::string(rng() % 300, static_cast<char>(i % 7))};
        want[level].push_back(t);
        ASSERT_TRUE(tiles.Add(level, t.first, t.second).ok());
      }
      if (limit < 100000) {
        EXPECT_GT(Files(), 0u);
      }
      std::vector<Tile> got;
      ASSERT_TRUE(tiles.Drain([&](std::string k, std::string v) {
                         got.emplace_back(std::move(k), std::move(v));
                         return absl::OkStatus();
                       }).ok());
      std::vector<Tile> all;
      for (const auto& level : want) all.insert(all.end(), level.begin(), level.end());
      EXPECT_EQ(got, all);
      EXPECT_EQ(Files(), 0u);
    }
    if (limit < 100000) {
      EXPECT_GT(tiles.spilled_bytes(), 0u);
    } else {
      EXPECT_EQ(tiles.spilled_bytes(), 0u);
    }
  }
}

TEST_F(LevelTilesTest, DroppedUndrainedRemovesItsFiles) {
  {
    LevelTiles tiles((dir_ / "w1").string(), 10);
    for (uint32_t level = 0; level < 4; ++level) ASSERT_TRUE(tiles.Add(level, "k", std::string(100, 'x')).ok());
    EXPECT_EQ(Files(), 4u);
  }
  EXPECT_EQ(Files(), 0u);
}

}  // namespace
}  // namespace tracetable
