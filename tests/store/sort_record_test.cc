// SortRecord (store/sort_record.h) packs fields that no record needs at once
// into shared bytes: a counter's value and a slice's flow bindings, an async
// slice's nest and its (unused) bindings, the id in 40 bits. Every field
// must come back as it went in, through a tile row too, at the extremes.
#include "store/sort_record.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "gtest/gtest.h"

namespace tracetable {
namespace {

TEST(SortRecord, IdKindAndFlagsKeepTheirBitsApart) {
  SortRecord r;
  r.id = kMaxEventIds - 1;
  r.kind = EventKind::kAsyncInstant;
  r.flags = 0xFF;
  r.id_high = 0xAB;
  EXPECT_EQ(r.id, kMaxEventIds - 1);
  EXPECT_EQ(r.kind, EventKind::kAsyncInstant);
  EXPECT_EQ(r.flags, 0xFFu);
  r.flags = kFlagHasThreadTime;
  r.id = 0;
  EXPECT_EQ(r.kind, EventKind::kAsyncInstant);
  EXPECT_EQ(r.flags, static_cast<uint64_t>(kFlagHasThreadTime));
  EXPECT_EQ(r.id_high, 0xABu);
}

// SetIdWord writes the bit-fields' word at once: it must put each field
// where the compiler's bit-fields have it, and touch nothing else.
TEST(SortRecord, SetIdWordMatchesTheBitFields) {
  std::mt19937_64 rng(5);
  for (int i = 0; i < 1000; ++i) {
    const uint64_t id = rng() % kMaxEventIds;
    const auto kind = static_cast<EventKind>(rng() % 256);
    const uint64_t flags = rng() % 256, id_high = rng() % 256;
    SortRecord a, b;
    a.flow_id = b.flow_id = 0xDEADBEEF;
    a.flow_out = b.flow_out = 0xFEEDFACE;
    a.id = id;
    a.kind = kind;
    a.flags = flags;
    a.id_high = id_high;
    SetIdWord(&b, id, kind, flags, id_high);
    ASSERT_EQ(std::memcmp(&a, &b, sizeof(SortRecord)), 0) << i;
    EXPECT_EQ(b.id, id);
    EXPECT_EQ(b.kind, kind);
    EXPECT_EQ(b.flags, flags);
    EXPECT_EQ(b.id_high, id_high);
  }
}

TEST(SortRecord, CounterValueAndSliceFlowsRoundTripThroughRows) {
  for (double v : {0.0, -1.5, 1e300, std::numeric_limits<double>::denorm_min(),
                   std::numeric_limits<double>::infinity()}) {
    SortRecord c;
    c.kind = EventKind::kCounter;
    c.set_value(v);
    const TileRow row = RowFromRecord(c, 0);
    EXPECT_EQ(row.value, v);
    EXPECT_EQ(row.flow_out, 0u);
    EXPECT_EQ(row.flow_in, 0u);
    EXPECT_EQ(RecordFromRow(row, 3).value(), v);
  }
  SortRecord x;
  x.kind = EventKind::kSlice;
  x.flow_out = 0xFFFFFFFF;
  x.flow_in = 7;
  x.id = 123456789012;
  const TileRow row = RowFromRecord(x, 2);
  EXPECT_EQ(row.flow_out, 0xFFFFFFFFu);
  EXPECT_EQ(row.flow_in, 7u);
  EXPECT_EQ(row.value, 0.0);
  EXPECT_EQ(row.id, 123456789012u);
  const SortRecord back = RecordFromRow(row, 9);
  EXPECT_EQ(back.flow_out, 0xFFFFFFFFu);
  EXPECT_EQ(back.flow_in, 7u);
  EXPECT_EQ(back.id, 123456789012u);
  EXPECT_EQ(back.track, 9u);
}

TEST(SortRecord, AsyncNestOfRootsAndChildren) {
  SortRecord root;
  root.id = kMaxEventIds - 2;
  SetAsyncNest(&root, {root.id, 0, 0xFFFFFFFF});
  AsyncNest n = GetAsyncNest(root);
  EXPECT_EQ(n.root, root.id);
  EXPECT_EQ(n.depth, 0u);
  EXPECT_EQ(n.height, 0xFFFFFFFFu);
  for (uint64_t root_id : {uint64_t{0}, uint64_t{1} << 32, kMaxEventIds - 1}) {
    SortRecord child;
    child.id = 5;
    SetAsyncNest(&child, {root_id, 0xFFFFFFFF, 4});
    n = GetAsyncNest(child);
    EXPECT_EQ(n.root, root_id);
    EXPECT_EQ(n.depth, 0xFFFFFFFFu);
    EXPECT_EQ(child.id, 5u);
  }
}

}  // namespace
}  // namespace tracetable
