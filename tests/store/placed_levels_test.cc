// PlacedLevels (store/placed_levels.h) gives a track's placed records in
// exactly PlacedLess order however they arrive: nearly in order (the common
// case, merged piecewise), shuffled (the fallback sort), or a mix, on many
// levels, reused track after track; and refuses records past its capacity.
#include "store/placed_levels.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace tracetable {
namespace {

// `disorder`: how far back (in records) a record may land from its place.
std::vector<PlacedRecord> Placed(uint32_t seed, size_t n, int levels, size_t disorder) {
  std::mt19937_64 rng(seed);
  std::vector<PlacedRecord> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i].level = static_cast<uint32_t>(rng() % levels);
    v[i].event.ts = static_cast<int64_t>(i / 3);  // ties on ts, broken by id
    v[i].event.id = i + 1;
  }
  for (size_t i = 0; i + 1 < n && disorder > 0; ++i) {
    std::swap(v[i], v[std::min(n - 1, i + rng() % disorder)]);
  }
  return v;
}

std::vector<uint64_t> Drained(PlacedLevels& levels) {
  std::vector<uint64_t> ids;
  EXPECT_TRUE(levels.Drain([&](const PlacedRecord& p) {
    ids.push_back(p.event.id);
    return absl::OkStatus();
  }).ok());
  return ids;
}

std::vector<uint64_t> Want(std::vector<PlacedRecord> v) {
  std::sort(v.begin(), v.end(), PlacedLess);
  std::vector<uint64_t> ids;
  for (const PlacedRecord& p : v) ids.push_back(p.event.id);
  return ids;
}

TEST(PlacedLevels, AnyArrivalOrderComesOutSorted) {
  PlacedLevels levels(1 << 20);
  uint32_t seed = 1;
  // Reused track after track: in order, locally out of order (as placed
  // events are), far out of order (the fallback), a single level.
  for (size_t disorder : {0, 2, 50, 5000, 200000}) {
    for (int nlevels : {1, 3, 12}) {
      SCOPED_TRACE(testing::Message() << "disorder " << disorder << " levels " << nlevels);
      const std::vector<PlacedRecord> in = Placed(seed++, 60000, nlevels, disorder);
      for (const PlacedRecord& p : in) ASSERT_TRUE(levels.Add(p));
      EXPECT_EQ(levels.size(), in.size());
      EXPECT_EQ(Drained(levels), Want(in));
      EXPECT_EQ(levels.size(), 0u);
    }
  }
  EXPECT_TRUE(Drained(levels).empty());
}

TEST(PlacedLevels, FullRefusesAndDrainsInOrderToFillAgain) {
  PlacedLevels levels(1000);
  const std::vector<PlacedRecord> in = Placed(9, 1500, 4, 30);
  size_t added = 0;
  while (added < in.size() && levels.Add(in[added])) ++added;
  EXPECT_EQ(added, 1000u);
  EXPECT_EQ(Drained(levels), Want(std::vector<PlacedRecord>(in.begin(), in.begin() + 1000)));
  EXPECT_EQ(levels.size(), 0u);
  // Usable again afterwards.
  for (size_t i = 1000; i < in.size(); ++i) ASSERT_TRUE(levels.Add(in[i]));
  EXPECT_EQ(Drained(levels), Want(std::vector<PlacedRecord>(in.begin() + 1000, in.end())));
}

// Released as a track streams (store/track_pool.cc): each release hands
// over, per level, the records before a time no later record of the level
// precedes, and releases then the final drain give every record once, in
// PlacedLess order, most of them early.
TEST(PlacedLevels, ReleasesGiveTheFinalRecordsInOrderAndTheDrainTheRest) {
  for (size_t disorder : {0, 40, 3000}) {
    SCOPED_TRACE(testing::Message() << "disorder " << disorder);
    const int kLevels = 5;
    const std::vector<PlacedRecord> in = Placed(21 + disorder, 50000, kLevels, disorder);
    // later_min[i][level]: the earliest start among records i.. of the level.
    std::vector<std::array<int64_t, kLevels>> later_min(in.size() + 1);
    later_min[in.size()].fill(INT64_MAX);
    for (size_t i = in.size(); i-- > 0;) {
      later_min[i] = later_min[i + 1];
      later_min[i][in[i].level] = std::min(later_min[i][in[i].level], in[i].event.ts);
    }
    PlacedLevels levels(1 << 20);
    std::vector<uint64_t> got_by_level[kLevels];
    auto take = [&](const PlacedRecord& p) {
      got_by_level[p.level].push_back(p.event.id);
      return absl::OkStatus();
    };
    size_t released = 0;
    for (size_t i = 0; i < in.size(); ++i) {
      ASSERT_TRUE(levels.Add(in[i]));
      if (i % 1000 != 999) continue;
      const size_t before = levels.size();
      // The latest promise that holds, less a lag that differs by level.
      ASSERT_TRUE(levels.ReleaseBefore([&](uint32_t level) { return later_min[i + 1][level] - 5 * level; }, take).ok());
      released += before - levels.size();
    }
    EXPECT_GT(released, in.size() * 9 / 10);
    ASSERT_TRUE(levels.Drain(take).ok());
    std::vector<uint64_t> got;
    for (const auto& ids : got_by_level) got.insert(got.end(), ids.begin(), ids.end());
    EXPECT_EQ(got, Want(in));
    EXPECT_EQ(levels.size(), 0u);
  }
}

}  // namespace
}  // namespace tracetable
