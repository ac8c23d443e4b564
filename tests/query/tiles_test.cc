// Tiles (query/tiles.h): every tile equals the brute-force window reference
// restricted to its range and tracks, on randomized traces (real ones are in
// tests/real_traces); an event spanning many tiles is in each of them; a
// counter tile starts with the value in effect at its start; the binary
// answer round-trips and a damaged one is an error.
#include "query/tiles.h"

#include "query/tile_pack.h"

#include "gtest/gtest.h"
#include "store/table_builder.h"
#include "tests/query/random_trace.h"
#include "tests/query/tile_reference.h"
#include "tests/query/window_reference.h"

namespace tracetable {
namespace {

using namespace tracetable::testing;

TEST(Tiles, RandomTracesMatchTheReference) {
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(seed);
    RandomTable random;
    ASSERT_TRUE(random.Build(seed));
    CheckTilesAgainst(*random.table, random.trace, seed, 60);
  }
}

// One long slice over many tiles, short ones around it, and a counter that
// changes rarely: its value at a tile start comes from a sample tiles before.
class HandMadeTable : public ::testing::Test {
 protected:
  static constexpr int64_t kUs = 1'000'000;
  void SetUp() override {
    BuildOptions opts;
    opts.output = dir_.Sub("t.tracetable");
    auto b = TableBuilder::Create(opts);
    ASSERT_TRUE(b.ok());
    TableBuilder& builder = **b;
    builder.BeginInput("hand", "");
    ASSERT_TRUE(builder.ToRelativePs(0, 0).ok());
    thread_ = builder.ThreadTrack({"1", true}, {"1", true});
    counter_ = builder.CounterTrack({"1", true}, "mem", "bytes");
    auto add = [&](uint32_t track, EventKind kind, int64_t ts, int64_t dur, const char* name,
                   double value = 0) {
      Event e;
      e.kind = kind;
      e.track = track;
      e.ts = ts;
      e.dur = dur;
      e.name = builder.Intern(name);
      e.value = value;
      ASSERT_TRUE(builder.Add(e).ok());
    };
    add(thread_, EventKind::kSlice, 0, 1000 * kUs, "long");
    for (int i = 0; i < 1000; ++i) add(thread_, EventKind::kSlice, i * kUs, kUs / 10, "short");
    add(counter_, EventKind::kCounter, 0, 0, "mem", 5);
    add(counter_, EventKind::kCounter, 300 * kUs, 0, "mem", 7);
    add(counter_, EventKind::kCounter, 999 * kUs, 0, "mem", 1);
    ASSERT_TRUE(builder.Finish().ok());
    auto t = Table::Open(opts.output);
    ASSERT_TRUE(t.ok());
    table_ = std::move(*t);
  }

  TempDir dir_;
  uint32_t thread_ = 0, counter_ = 0;
  std::unique_ptr<Table> table_;
};

TEST_F(HandMadeTable, LongEventIsInEveryTileItOverlaps) {
  // 1.024 us bins: a tile is 524 us, the long slice covers tiles 0 and 1 of the
  // 1000 us span; at 16 ns bins (level 4), 123 tiles.
  for (int level : {10, 4}) {
    const int64_t last = (1000 * kUs) / TileWidth(level);
    int seen = 0;
    for (int64_t k = 0; k <= last; ++k) {
      absl::StatusOr<WindowResult> r = QueryTile(*table_, {level, k, {thread_}});
      ASSERT_TRUE(r.ok()) << r.status();
      for (const WindowItem& i : r->items) {
        if (!i.summary && table_->String(i.row.name) == "long") ++seen;
      }
    }
    EXPECT_EQ(seen, last + 1) << "level " << level;
  }
}

TEST_F(HandMadeTable, CounterTileStartsWithTheValueInEffect) {
  const int level = 4;  // 8.192 us tiles
  const int64_t k = (500 * kUs) / TileWidth(level);
  absl::StatusOr<WindowResult> r = QueryTile(*table_, {level, k, {counter_}});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->items.size(), 1u);
  EXPECT_EQ(r->items[0].row.value, 7);
  EXPECT_LT(r->items[0].row.ts, TileWindow(*table_, {level, k, {counter_}}).start);
  CheckRoundTrip(*table_, {level, k, {counter_}}, *r);
}

TEST_F(HandMadeTable, RefusesRequestsOutsideTheTable) {
  EXPECT_TRUE(absl::IsInvalidArgument(QueryTile(*table_, {-1, 0, {thread_}}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(QueryTile(*table_, {kMaxTileLevel + 1, 0, {thread_}}).status()));
  EXPECT_TRUE(absl::IsOutOfRange(QueryTile(*table_, {0, -1, {thread_}}).status()));
  EXPECT_TRUE(absl::IsOutOfRange(QueryTile(*table_, {0, 1'000'000'000, {thread_}}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(QueryTile(*table_, {0, 0, {}}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(QueryTile(*table_, {0, 0, {99}}).status()));
}

TEST_F(HandMadeTable, ETagNamesTheTableAndTheRequest) {
  const std::string a = TileETag(*table_, {4, 3, {thread_, counter_}});
  EXPECT_EQ(a, TileETag(*table_, {4, 3, {counter_, thread_}}));
  EXPECT_EQ(a.front(), '"');
  EXPECT_EQ(a.back(), '"');
  EXPECT_NE(a, TileETag(*table_, {4, 4, {thread_, counter_}}));
  EXPECT_NE(a, TileETag(*table_, {5, 3, {thread_, counter_}}));
  EXPECT_NE(a, TileETag(*table_, {4, 3, {thread_}}));
  EXPECT_NE(a, TileETag(*table_, {4, 3, {thread_, counter_}, kTileCompactVersion}));
  EXPECT_TRUE(absl::IsInvalidArgument(QueryTile(*table_, {4, 3, {thread_}, 3}).status()));
}

TEST_F(HandMadeTable, DamagedAnswerIsAnError) {
  TileRequest req{4, 2, {thread_, counter_}};
  absl::StatusOr<WindowResult> r = QueryTile(*table_, req);
  ASSERT_TRUE(r.ok());
  ASSERT_FALSE(r->items.empty());
  CheckRoundTrip(*table_, req, *r);
  std::string bytes = *EncodeTileAnswer(*table_, req, *r);
  std::string bad_magic = bytes;
  bad_magic[0] ^= 1;
  EXPECT_TRUE(absl::IsDataLoss(DecodeTileAnswer(bad_magic).status()));
  std::string bad_count = bytes;
  bad_count[48] ^= 1;  // num_items
  EXPECT_TRUE(absl::IsDataLoss(DecodeTileAnswer(bad_count).status()));
  EXPECT_TRUE(absl::IsDataLoss(DecodeTileAnswer(bytes + std::string(8, '\0')).status()));
}

// The compact layout is smaller here (times in µs units, starts as deltas)
// and refuses what does not add up: extra bytes, a kind with a pack bit the
// aligned layout cannot have, counts that disagree, a varint past the end.
TEST_F(HandMadeTable, DamagedCompactAnswerIsAnError) {
  TileRequest req{4, 2, {thread_, counter_}, kTileCompactVersion};
  absl::StatusOr<WindowResult> r = QueryTile(*table_, req);
  ASSERT_TRUE(r.ok());
  const std::string bytes = *EncodeTileAnswer(*table_, req, *r);
  const std::string aligned = *EncodeTileAnswer(*table_, {4, 2, {thread_, counter_}}, *r);
  EXPECT_LT(bytes.size(), aligned.size() / 3);
  EXPECT_TRUE(absl::IsDataLoss(UnpackTileAnswer(aligned).status()));
  EXPECT_TRUE(absl::IsDataLoss(PackTileAnswer(bytes).status()));
  EXPECT_TRUE(absl::IsDataLoss(DecodeTileAnswer(bytes + std::string(8, '\0')).status()));
  std::string bad_count = bytes;
  bad_count[48] ^= 1;
  EXPECT_TRUE(absl::IsDataLoss(DecodeTileAnswer(bad_count).status()));
  std::string bad_unit = bytes;
  bad_unit[60] = bad_unit[61] = bad_unit[62] = bad_unit[63] = 0;
  EXPECT_TRUE(absl::IsDataLoss(DecodeTileAnswer(bad_unit).status()));
  const size_t kinds = 64 + 8 * 2;  // header, two tracks' ids and counts
  std::string bad_kind = bytes;
  bad_kind[kinds] = 0x07;
  EXPECT_TRUE(absl::IsDataLoss(DecodeTileAnswer(bad_kind).status()));
  std::string unterminated = bytes.substr(0, kinds + r->items.size());
  unterminated.append(64, '\x80');
  EXPECT_TRUE(absl::IsDataLoss(DecodeTileAnswer(unterminated).status()));
}

}  // namespace
}  // namespace tracetable
