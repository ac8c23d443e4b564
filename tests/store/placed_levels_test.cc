// PlacedLevels (store/placed_levels.h) gives a track's placed records in
// exactly PlacedLess order however they arrive: nearly in order (the common
// case, merged piecewise), shuffled (the fallback sort), or a mix, on many
// levels, reused track after track; and refuses records past its capacity.
#include "store/placed_levels.h"

#include <algorithm>
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

}  // namespace
}  // namespace tracetable
