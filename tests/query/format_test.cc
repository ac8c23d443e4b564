// Codec round trips (time text, keys, tiles, arguments, search name groups) and the builder's B/E and async
// matching.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <numeric>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "format/args_codec.h"
#include "format/flow_id.h"
#include "format/keys.h"
#include "format/levels.h"
#include "format/memory_segment_codec.h"
#include "format/search_group_codec.h"
#include "format/tile_codec.h"
#include "format/time.h"
#include "format/tracetable.pb.h"
#include "gtest/gtest.h"
#include "store/table.h"
#include "store/table_builder.h"
#include "store/table_format.h"
#include "tests/table_edit.h"

namespace tracetable {
namespace {

TEST(Time, ParsesExactDecimals) {
  auto t = ParseMicros("1680000000000.123456");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->ns, int64_t{1680000000000123});
  EXPECT_EQ(t->ps, 456);
  EXPECT_EQ(ParseMicros("1.5e3")->ns, 1500000);
  EXPECT_EQ(ParseMicros("-0.0005")->ns, -1);
  EXPECT_EQ(ParseMicros("-0.0005")->ps, 500);
  EXPECT_EQ(ParseMicros("0")->ns, 0);
  EXPECT_FALSE(ParseMicros("abc").ok());
  EXPECT_FALSE(ParseMicros("1e400").ok());
  EXPECT_FALSE(ParseMicros("").ok());
  EXPECT_FALSE(ParseMicros("1.2.3").ok());
}

// 36 significant digits times the unit does not fit __int128 (found by
// fuzzing): exact to the picosecond, or out of range, never wrapped.
TEST(Time, ManyDigitsDoNotOverflow) {
  EXPECT_FALSE(ParseMicros("123456789012345678901234567890123456").ok());
  EXPECT_FALSE(ParseMicros("-999999999999999999999999999999999999").ok());
  auto t = ParseMicros("1.23456789012345678901234567890123456");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->ns, 1234);
  EXPECT_EQ(t->ps, 567);
  // Below a picosecond negative values still round toward -infinity.
  auto n = ParseMicros("-1.00000000000000000000000000000000001");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->ns, -1001);
  EXPECT_EQ(n->ps, 999);
  auto m = ParseMicros("-1.00000000000000000000000000000000000");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->ns, -1000);
  EXPECT_EQ(m->ps, 0);
}

TEST(Time, FormatRoundTrips) {
  std::mt19937_64 rng(1);
  for (int i = 0; i < 10000; ++i) {
    const __int128 ps = static_cast<__int128>(static_cast<int64_t>(rng())) * 1000 + rng() % 1000;
    const std::string text = FormatMicros(ps);
    auto back = ParseMicros(text);
    ASSERT_TRUE(back.ok()) << text;
    EXPECT_EQ(static_cast<__int128>(back->ns) * 1000 + back->ps, ps) << text;
  }
  EXPECT_EQ(FormatMicros(1500000), "1.5");
  EXPECT_EQ(FormatMicros(-1), "-0.000001");
}

// A flow id is a number exactly when its text is the decimal the number
// prints as, so two ids are one flow exactly when their texts are equal.
TEST(FlowId, NumbersAreCanonicalDecimalsBelowTwoToThe31) {
  for (const char* text : {"0", "7", "73689", "2147483647"}) {
    std::optional<uint32_t> id = NumericFlowId(text);
    ASSERT_TRUE(id) << text;
    EXPECT_TRUE(IsNumericFlowId(*id));
    EXPECT_EQ(NumericFlowIdText(*id), text);
  }
  EXPECT_EQ(*NumericFlowId("0"), kNumericFlowIdBit);
  for (const char* text : {"", "00", "007", "-1", "+1", "1.0", "1e3", "0x1f", " 1", "1 ", "2147483648",
                           "4294967296", "99999999999", "18446744073709551617", "pid 1:2", "1|2"}) {
    EXPECT_FALSE(NumericFlowId(text)) << text;
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 100000; ++i) {
    const uint32_t v = rng() >> 1;
    std::optional<uint32_t> id = NumericFlowId(std::to_string(v));
    ASSERT_TRUE(id);
    EXPECT_EQ(*id, v | kNumericFlowIdBit);
  }
  EXPECT_FALSE(IsNumericFlowId(kMaxStringIds - 1));
}

TEST(Keys, TileKeysSortByTrackSectionLevelBucket) {
  std::vector<TileKey> keys = {{1, TileSection::kEvents, 0, 5},
                               {1, TileSection::kEvents, 0, 300},
                               {1, TileSection::kEvents, 2, 0},
                               {1, TileSection::kSummaries, 1, 0},
                               {2, TileSection::kEvents, 0, 0},
                               {256, TileSection::kEvents, 0, 0}};
  for (size_t i = 0; i + 1 < keys.size(); ++i) {
    EXPECT_LT(EncodeTileKey(keys[i]), EncodeTileKey(keys[i + 1])) << i;
  }
  TileKey back;
  ASSERT_TRUE(DecodeTileKey(EncodeTileKey(keys[3]), &back));
  EXPECT_EQ(back.track, 1u);
  EXPECT_EQ(back.section, TileSection::kSummaries);
  EXPECT_EQ(back.level, 1);
  EXPECT_FALSE(DecodeTileKey("Tshort", &back));
}

TEST(Levels, ClassesAndResolutions) {
  EXPECT_EQ(DurationClass(0, 20), 0);
  EXPECT_EQ(DurationClass(999, 20), 0);
  EXPECT_EQ(DurationClass(1000, 20), 1);
  EXPECT_EQ(DurationClass(Resolution(2) - 1, 20), 1);
  EXPECT_EQ(DurationClass(Resolution(2), 20), 2);
  EXPECT_EQ(DurationClass(INT64_MAX, 12), 11);
  EXPECT_EQ(LevelForResolution(0, 20), 0);
  // A query's summary source keeps summary tiles and is its level or the
  // one below, whose bins nest in the query's.
  for (int level = 1; level < kMaxLevels; ++level) {
    const int src = SummarySource(level);
    EXPECT_TRUE(HasSummaryTiles(src)) << level;
    EXPECT_TRUE(src == level || src == level - 1) << level;
  }
  EXPECT_FALSE(HasSummaryTiles(3));
  EXPECT_EQ(SummarySource(0), 0);
  EXPECT_GE(Resolution(NumLevelsForSpan(int64_t{1} << 45) - 1), int64_t{1} << 45);
  EXPECT_EQ(NumLevelsForSpan(INT64_MAX), kMaxLevels);
}

// EncodeTile writes the wire format by hand; this is the Tile message it
// stands for, filled as the codec used to fill it, whose serialisation the
// bytes must equal (tables stay the same bytes).
std::string ReferenceTileBytes(const std::vector<TileRow>& rows, int64_t tile_start, bool summary) {
  uint64_t unit = 0;
  auto fold = [&unit](int64_t v) { unit = std::gcd(unit, static_cast<uint64_t>(v < 0 ? -v : v)); };
  for (const TileRow& r : rows) {
    fold(r.ts - tile_start);
    fold(r.dur);
    if (summary && r.count > 1) {
      fold(static_cast<int64_t>(r.covered));
      fold(r.longest_dur);
    }
  }
  if (unit == 0) unit = 1;
  const int64_t u = static_cast<int64_t>(unit);
  proto::Tile tile;
  if (unit > 1) tile.set_time_unit(unit);
  int64_t prev_ts = tile_start;
  for (const TileRow& r : rows) {
    tile.add_ts_delta((r.ts - prev_ts) / u);
    prev_ts = r.ts;
  }
  bool any_id = false;
  for (const TileRow& r : rows) any_id |= r.id != 0;
  uint64_t prev_id = 0;
  for (const TileRow& r : rows) {
    if (!any_id) break;
    if (r.count > 1) {
      tile.add_id_delta(0);
      continue;
    }
    tile.add_id_delta(static_cast<int64_t>(r.id - prev_id));
    prev_id = r.id;
  }
  auto plain = [&rows](auto* column, auto get) {
    bool any = false;
    for (const TileRow& r : rows) any |= get(r) != decltype(get(r)){};
    if (any) {
      for (const TileRow& r : rows) column->Add(get(r));
    }
  };
  auto small = [&rows](auto* column, proto::SmallColumn* (proto::Tile::*mut)(), proto::Tile* t, auto get) {
    std::vector<uint32_t> values;
    bool any = false;
    for (const TileRow& r : rows) {
      any |= get(r) != 0;
      if (std::find(values.begin(), values.end(), get(r)) == values.end()) values.push_back(get(r));
    }
    if (!any) return;
    if (values.size() > 16) {
      for (const TileRow& r : rows) column->Add(get(r));
      return;
    }
    proto::SmallColumn* c = (t->*mut)();
    for (uint32_t v : values) c->add_values(v);
    int width = 0;
    while ((size_t{1} << width) < values.size()) ++width;
    if (width == 0) return;
    std::string index((rows.size() * width + 7) / 8, '\0');
    size_t bit = 0;
    for (const TileRow& r : rows) {
      const size_t idx = std::find(values.begin(), values.end(), get(r)) - values.begin();
      for (int b = 0; b < width; ++b, ++bit) {
        if (idx & (size_t{1} << b)) index[bit / 8] = static_cast<char>(index[bit / 8] | (1u << (bit % 8)));
      }
    }
    c->set_index(index);
  };
  plain(tile.mutable_dur(), [u](const TileRow& r) { return static_cast<uint64_t>(r.dur / u); });
  plain(tile.mutable_name(), [](const TileRow& r) { return r.name; });
  small(tile.mutable_cat(), &proto::Tile::mutable_cat_small, &tile, [](const TileRow& r) { return r.cat; });
  small(tile.mutable_lane(), &proto::Tile::mutable_lane_small, &tile, [](const TileRow& r) { return r.lane; });
  small(tile.mutable_kind(), &proto::Tile::mutable_kind_small, &tile,
        [](const TileRow& r) { return static_cast<uint32_t>(r.kind); });
  small(tile.mutable_flags(), &proto::Tile::mutable_flags_small, &tile, [](const TileRow& r) { return r.flags; });
  plain(tile.mutable_flow_id(), [](const TileRow& r) { return r.flow_id; });
  plain(tile.mutable_flow_out(), [](const TileRow& r) { return r.flow_out; });
  plain(tile.mutable_flow_in(), [](const TileRow& r) { return r.flow_in; });
  // Counter values that are all integers (version 8) go to field 21, after
  // the small columns.
  const bool int_values =
      std::any_of(rows.begin(), rows.end(), [](const TileRow& r) { return r.value != 0; }) &&
      std::all_of(rows.begin(), rows.end(), [](const TileRow& r) {
        return std::abs(r.value) <= 0x1p53 && r.value == std::trunc(r.value) && !(r.value == 0 && std::signbit(r.value));
      });
  if (!int_values) plain(tile.mutable_value(), [](const TileRow& r) { return r.value; });
  if (summary) {
    plain(tile.mutable_count(), [](const TileRow& r) { return r.count; });
    plain(tile.mutable_covered(), [unit](const TileRow& r) { return r.count > 1 ? r.covered / unit : uint64_t{0}; });
    plain(tile.mutable_longest_dur(),
          [u](const TileRow& r) { return r.count > 1 ? static_cast<uint64_t>(r.longest_dur / u) : uint64_t{0}; });
  }
  int64_t prev_value = 0;
  for (const TileRow& r : rows) {
    if (!int_values) break;
    tile.add_value_delta(static_cast<int64_t>(r.value) - prev_value);
    prev_value = static_cast<int64_t>(r.value);
  }
  return tile.SerializeAsString();
}

TEST(TileCodec, BytesEqualTheTileMessage) {
  std::mt19937_64 rng(11);
  // Units of the kinds traces have (ps, ns, us, odd and power-of-two ones),
  // few and many distinct values per column, columns all zero, rows out of
  // time order (summaries), -0.0 and huge values.
  const int64_t units[] = {1, 1000, 1000000, 3000, 1024, 7, 1000000000};
  for (int round = 0; round < 400; ++round) {
    const int64_t unit = units[round % 7];
    const size_t n = round % 50 == 0 ? 0 : 1 + rng() % 600;
    const bool summary = round % 3 == 0;
    const uint32_t spread = (round / 7) % 4 == 0 ? 1 : (round / 7) % 4 == 1 ? 3 : (round / 7) % 4 == 2 ? 17 : 100000;
    const int64_t tile_start = static_cast<int64_t>(rng() % 1000) * unit - 50 * unit;
    std::vector<TileRow> rows(n);
    for (TileRow& r : rows) {
      r.ts = tile_start + static_cast<int64_t>(rng() % 100000) * unit;
      r.dur = static_cast<int64_t>(rng() % (spread == 1 ? 1 : 1u << (rng() % 40))) * unit;
      r.kind = static_cast<EventKind>(rng() % std::min<uint32_t>(spread, 6));
      r.lane = static_cast<uint32_t>(rng() % spread);
      r.name = static_cast<uint32_t>(rng() % spread);
      r.cat = static_cast<uint32_t>(rng() % spread);
      r.flags = static_cast<uint32_t>(rng() % spread);
      r.flow_id = round % 5 == 0 ? static_cast<uint32_t>(rng()) : 0;
      r.flow_out = static_cast<uint32_t>(rng() % spread);
      r.flow_in = round % 4 == 0 ? UINT32_MAX : 0;
      r.id = round % 6 == 1 ? 0 : rng() % (uint64_t{1} << (rng() % 64));
      // Fractions, integers (memory in bytes) up to and past 2^53, -0.0.
      r.value = round % 8 == 0   ? -0.0
                : round % 8 == 1 ? static_cast<double>(rng()) / 3
                : round % 8 == 2 ? static_cast<double>(static_cast<int64_t>(rng() % (uint64_t{1} << 54)) -
                                                       (int64_t{1} << 53))
                : round % 8 == 3 ? static_cast<double>(rng() % 20000000000)
                                 : 0;
      r.count = summary ? 1 + rng() % 3 : 1;
      if (r.count > 1) r.id = 0;
      r.covered = r.count > 1 ? static_cast<uint64_t>(rng() % 1000) * unit : static_cast<uint64_t>(r.dur);
      r.longest_dur = r.count > 1 ? static_cast<int64_t>(rng() % 1000) * unit : r.dur;
    }
    ASSERT_EQ(EncodeTile(rows, tile_start, summary), ReferenceTileBytes(rows, tile_start, summary))
        << "round " << round;
  }
}

TEST(TileCodec, RoundTripsEveryColumn) {
  std::vector<TileRow> rows;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 500; ++i) {
    TileRow r;
    r.kind = static_cast<EventKind>(rng() % 6);
    r.lane = rng() % 9;
    r.ts = 1000000 + static_cast<int64_t>(rng() % 100000);
    r.dur = rng() % 5000;
    r.name = rng() % 100;
    r.cat = rng() % 5;
    r.flags = rng() % 4;
    r.flow_id = rng() % 3;
    r.id = rng() % 100000;
    r.value = static_cast<double>(rng() % 1000) / 7;
    r.count = 1 + rng() % 3;
    if (r.count > 1) r.id = 0;  // summaries carry no event id
    r.covered = r.count > 1 ? r.dur * 2 : r.dur;
    r.longest_dur = r.count > 1 ? r.dur / 2 : r.dur;
    rows.push_back(r);
  }
  const std::string bytes = EncodeTile(rows, 1000000, /*summary=*/true);
  std::vector<TileRow> back;
  ASSERT_TRUE(DecodeTile(bytes, 1000000, &back).ok());
  ASSERT_EQ(back.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(back[i].ts, rows[i].ts);
    EXPECT_EQ(back[i].dur, rows[i].dur);
    EXPECT_EQ(back[i].kind, rows[i].kind);
    EXPECT_EQ(back[i].lane, rows[i].lane);
    EXPECT_EQ(back[i].name, rows[i].name);
    EXPECT_EQ(back[i].id, rows[i].id);
    EXPECT_EQ(back[i].value, rows[i].value);
    EXPECT_EQ(back[i].count, rows[i].count);
    EXPECT_EQ(back[i].covered, rows[i].covered);
    EXPECT_EQ(back[i].longest_dur, rows[i].longest_dur);
  }
  EXPECT_FALSE(DecodeTile("\xff\xff\xff", 0, &back).ok());
}

TEST(TileCodec, StoresTimesInTheTilesUnit) {
  // Whole microseconds but for one row: the unit is the gcd, 1 ns here.
  std::vector<TileRow> rows;
  for (int i = 0; i < 100; ++i) {
    TileRow r;
    r.ts = 5'000'000 + i * int64_t{3'000'000};
    r.dur = (i % 7) * int64_t{1'000'000};
    r.id = i + 1;
    rows.push_back(r);
  }
  rows[50].dur = 2'001'000;
  auto round_trip = [](const std::vector<TileRow>& in, bool summary, uint64_t unit) {
    const std::string bytes = EncodeTile(in, in.front().ts, summary);
    proto::Tile tile;
    ASSERT_TRUE(tile.ParseFromString(bytes));
    EXPECT_EQ(tile.time_unit(), unit == 1 ? 0 : unit);  // 1 ps is the default
    std::vector<TileRow> back;
    ASSERT_TRUE(DecodeTile(bytes, in.front().ts, &back).ok());
    ASSERT_EQ(back.size(), in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      EXPECT_EQ(back[i].ts, in[i].ts) << i;
      EXPECT_EQ(back[i].dur, in[i].dur) << i;
      EXPECT_EQ(back[i].covered, in[i].covered) << i;
      EXPECT_EQ(back[i].longest_dur, in[i].longest_dur) << i;
    }
  };
  for (TileRow& r : rows) r.covered = r.longest_dur = r.dur;
  round_trip(rows, false, 1000);
  rows[50].dur = 2'000'000;
  rows[50].covered = rows[50].longest_dur = rows[50].dur;
  round_trip(rows, false, 1'000'000);
  // Summary rows: covered and longest count too (here 500 ns).
  rows[10].count = 3;
  rows[10].id = 0;
  rows[10].covered = 1'500'000;
  rows[10].longest_dur = 500'000;
  round_trip(rows, true, 500'000);
  // Sub-ns (XSpace ps offsets) stay exact.
  rows[20].ts += 7;
  round_trip(rows, true, 1);
}

TEST(TileCodec, FewDistinctValuesAreBitPacked) {
  std::vector<TileRow> rows;
  for (int i = 0; i < 300; ++i) {
    TileRow r;
    r.ts = i * int64_t{1000};
    r.id = i + 1;
    r.cat = 7;                     // one value: no index at all
    r.flags = i % 3 ? 0u : uint32_t{kFlagHasArgs};  // two values: 1 bit a row
    r.lane = i % 40;               // too many values: plain varints
    r.kind = static_cast<EventKind>(i % 6);
    rows.push_back(r);
  }
  const std::string bytes = EncodeTile(rows, 0, /*summary=*/false);
  proto::Tile tile;
  ASSERT_TRUE(tile.ParseFromString(bytes));
  EXPECT_TRUE(tile.has_cat_small());
  EXPECT_TRUE(tile.cat_small().index().empty());
  EXPECT_EQ(tile.flags_small().index().size(), (300u + 7) / 8);
  EXPECT_FALSE(tile.has_lane_small());
  EXPECT_EQ(tile.lane_size(), 300);
  EXPECT_EQ(tile.kind_small().index().size(), (300u * 3 + 7) / 8);
  std::vector<TileRow> back;
  ASSERT_TRUE(DecodeTile(bytes, 0, &back).ok());
  ASSERT_EQ(back.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(back[i].cat, rows[i].cat);
    EXPECT_EQ(back[i].flags, rows[i].flags);
    EXPECT_EQ(back[i].lane, rows[i].lane);
    EXPECT_EQ(back[i].kind, rows[i].kind);
  }
  // An index pointing past the values is data loss, not a wrong row.
  tile.mutable_kind_small()->mutable_values()->RemoveLast();
  tile.mutable_kind_small()->mutable_values()->RemoveLast();
  EXPECT_FALSE(DecodeTile(tile.SerializeAsString(), 0, &back).ok());
}

// Counters of integers (bytes in use, queue depths) are stored as
// differences (version 8), exactly; any other value keeps the tile's values
// as doubles.
TEST(TileCodec, IntegerCounterValuesAreDifferences) {
  std::vector<TileRow> rows;
  for (int i = 0; i < 100; ++i) {
    TileRow r;
    r.kind = EventKind::kCounter;
    r.ts = i * int64_t{1000};
    r.id = i + 1;
    r.value = 10152480339.0 - i * 2877669.0;
    rows.push_back(r);
  }
  rows[7].value = 0x1p53;
  rows[8].value = -0x1p53;
  auto encoded = [](const std::vector<TileRow>& in, bool ints) {
    const std::string bytes = EncodeTile(in, 0, /*summary=*/false);
    proto::Tile tile;
    EXPECT_TRUE(tile.ParseFromString(bytes));
    EXPECT_EQ(tile.value_delta_size(), ints ? static_cast<int>(in.size()) : 0);
    EXPECT_EQ(tile.value_size(), ints ? 0 : static_cast<int>(in.size()));
    std::vector<TileRow> back;
    EXPECT_TRUE(DecodeTile(bytes, 0, &back).ok());
    EXPECT_EQ(back.size(), in.size());
    for (size_t i = 0; i < std::min(back.size(), in.size()); ++i) EXPECT_EQ(back[i].value, in[i].value) << i;
    return tile;
  };
  proto::Tile tile = encoded(rows, true);
  EXPECT_LT(tile.ByteSizeLong(), 100 * 8u);
  for (double odd : {0.5, 0x1p53 + 2, -0.0, std::numeric_limits<double>::infinity()}) {
    std::vector<TileRow> other = rows;
    other[50].value = odd;
    encoded(other, false);
  }
  // Damage is an error: both columns, or a sum past 2^53.
  proto::Tile both = tile;
  both.add_value(1.0);
  std::vector<TileRow> back;
  for (int i = 1; i < tile.value_delta_size(); ++i) both.add_value(1.0);
  EXPECT_TRUE(absl::IsDataLoss(DecodeTile(both.SerializeAsString(), 0, &back)));
  proto::Tile past = tile;
  past.set_value_delta(9, int64_t{1} << 62);
  EXPECT_TRUE(absl::IsDataLoss(DecodeTile(past.SerializeAsString(), 0, &back)));
}

TEST(SearchGroupCodec, RoundTripsAndRefusesDamage) {
  std::mt19937 rng(5);
  for (int round = 0; round < 200; ++round) {
    const uint32_t group = rng() % 1000;
    std::vector<SearchGroupEntry> entries;
    for (uint32_t i = 0; i < 64; ++i) {
      if (rng() % 3 != 0) continue;
      SearchGroupEntry e{(group << kSearchGroupShift) + i, {}};
      uint32_t rank = round % 5 == 0 ? UINT32_MAX - 200 : rng() % 100000;
      for (int n = 1 + static_cast<int>(rng() % 130); n > 0; --n, rank += 1 + rng() % 1000) {
        e.ranks.push_back(rank);
        if (rank > UINT32_MAX - 1001) break;
      }
      entries.push_back(std::move(e));
    }
    std::vector<SearchGroupEntry> back;
    ASSERT_TRUE(DecodeSearchNameGroup(group, EncodeSearchNameGroup(group, entries), &back).ok());
    EXPECT_EQ(back, entries);
  }
  const std::vector<SearchGroupEntry> entries = {{64 * 3 + 1, {5, 9, 700}}, {64 * 3 + 40, {2}}};
  proto::SearchNameGroup g;
  ASSERT_TRUE(g.ParseFromString(EncodeSearchNameGroup(3, entries)));
  EXPECT_EQ(g.names(), (uint64_t{1} << 1) | (uint64_t{1} << 40));
  EXPECT_EQ(g.first_delta(1), -3);  // 2 after 5
  std::vector<SearchGroupEntry> back;
  auto refused = [&back](proto::SearchNameGroup damaged) {
    return absl::IsDataLoss(DecodeSearchNameGroup(3, damaged.SerializeAsString(), &back));
  };
  proto::SearchNameGroup d = g;
  d.set_names(g.names() | 1);  // a name without a count
  EXPECT_TRUE(refused(d));
  d = g;
  d.set_count(0, 4);  // more postings than stored
  EXPECT_TRUE(refused(d));
  d = g;
  d.set_count(1, 0);
  EXPECT_TRUE(refused(d));
  d = g;
  d.set_rank_delta(0, 0);  // the same tile twice
  EXPECT_TRUE(refused(d));
  d = g;
  d.set_first_delta(1, -6);  // a rank below 0
  EXPECT_TRUE(refused(d));
  d = g;
  d.add_rank_delta(1);  // a posting of no name
  EXPECT_TRUE(refused(d));
  EXPECT_TRUE(absl::IsDataLoss(DecodeSearchNameGroup(3, "\xff\xff", &back)));
}

TEST(ArgsCodec, RoundTripsEveryTextByteForByte) {
  const std::vector<std::string> texts = {
      R"({"flops":4128617})", R"({"bytes":-134702,"name":"a\"b\u00e9","ok":true})",
      R"({})", R"({"x":1.50,"y":1e3,"z":007,"w":-0,"v":+1})", R"({"n":null,"f":false})",
      R"({"nested":{"a":[1,{"b":"}"}]},"list":[1,2,"]"]})", R"({ "spaced": 1 })",
      R"({"big":9223372036854775807,"bigger":9223372036854775808})", R"({"dup":1,"dup":2})",
      R"({"s":"","e":"\\"})", R"(not json)", R"({"a":1,})", R"({"a"})", R"({"a":})",
      "{\n  \"External id\": 3073,\"Ev Idx\": 0, \"Seq\" :\t\"x y\" ,\"v\":[1, 2]\n}",
      "{\n  \"External id\": 3074,\"Ev Idx\": 1, \"Seq\" :\t\"z\" ,\"v\":[3]\n}", "{ }",
      "{\"a\":1 ,}", "{\"a\": 1\r\n}"};
  std::vector<ArgsEntry> entries;
  for (size_t i = 0; i < texts.size(); ++i) {
    entries.push_back(ArgsEntry{static_cast<uint32_t>(i * 13), texts[i]});
  }
  entries.push_back(ArgsEntry{255, R"({"flops":1})"});
  const std::string bytes = EncodeArgsBlock(entries);
  std::vector<ArgsEntry> back;
  ASSERT_TRUE(DecodeArgsBlock(bytes, &back).ok());
  EXPECT_EQ(back, entries);
  for (const ArgsEntry& e : entries) {
    auto one = FindArgs(bytes, e.slot);
    ASSERT_TRUE(one.ok()) << e.slot;
    EXPECT_EQ(*one, e.json);
  }
  EXPECT_TRUE(absl::IsNotFound(FindArgs(bytes, 1).status()));
  // Flat objects are columns: keys once per block, integers as varints of
  // the difference from the key's integer before (the first: from 0).
  proto::ArgsBlock block;
  ASSERT_TRUE(block.ParseFromString(bytes));
  EXPECT_EQ(block.ints_size(), 0);
  EXPECT_EQ(block.int_deltas(0), 4128617);
  EXPECT_EQ(block.keys(0), "flops");
  // 4128617 then 1 are shorter as they are than as 4128617, 1 - 4128617.
  EXPECT_EQ(block.int_deltas(block.int_deltas_size() - 1), 1);
  ASSERT_GE(block.absolute_keys_size(), 1);
  EXPECT_EQ(block.absolute_keys(0), 0u);
  // Spaced objects are columns too; the two of one shape share a layout.
  EXPECT_EQ(block.layouts_size(), 3);
  EXPECT_FALSE(DecodeArgsBlock("\xff\xff", &back).ok());
  block.add_int_deltas(5);  // more values than the shape uses
  EXPECT_FALSE(DecodeArgsBlock(block.SerializeAsString(), &back).ok());
}

// Counting integers (event indexes, correlation ids) take a byte each: the
// reason the column holds differences.
TEST(ArgsCodec, CountingIntegersAreSmallDeltas) {
  std::vector<ArgsEntry> entries;
  for (uint32_t slot = 0; slot < 256; ++slot) {
    entries.push_back({slot, absl::StrCat(R"({"Ev Idx":)", 1000000 + slot, R"(,"stream":7,"External id":)",
                                          5000000 + 2 * slot, "}")});
  }
  const std::string bytes = EncodeArgsBlock(entries);
  proto::ArgsBlock block;
  ASSERT_TRUE(block.ParseFromString(bytes));
  ASSERT_EQ(block.int_deltas_size(), 3 * 256);
  for (int i = 3; i < block.int_deltas_size(); ++i) {
    EXPECT_EQ(block.int_deltas(i), (i % 3 == 0) ? 1 : (i % 3 == 1 ? 0 : 2)) << i;
  }
  std::vector<ArgsEntry> back;
  ASSERT_TRUE(DecodeArgsBlock(bytes, &back).ok());
  EXPECT_EQ(back, entries);
}

// Integers that do not count up (flops, sizes) are stored as they are
// under their key (version 8), where differences would take a bit more.
TEST(ArgsCodec, SpreadIntegersAreStoredAsTheyAre) {
  std::mt19937_64 rng(3);
  std::vector<ArgsEntry> entries;
  for (uint32_t slot = 0; slot < 256; slot += 2) {
    // Sizes spread over orders of magnitude: a difference takes the larger
    // of two values' bytes.
    const auto spread = [&rng] { return static_cast<int64_t>(rng() % (uint64_t{1} << (rng() % 31))); };
    entries.push_back({slot, absl::StrCat(R"({"Ev Idx":)", 1000000 + slot, R"(,"flops":)", spread(),
                                          R"(,"neg":)", -spread(), "}")});
  }
  const std::string bytes = EncodeArgsBlock(entries);
  proto::ArgsBlock block;
  ASSERT_TRUE(block.ParseFromString(bytes));
  ASSERT_EQ(block.keys_size(), 3);
  EXPECT_EQ(std::vector<uint32_t>(block.absolute_keys().begin(), block.absolute_keys().end()),
            (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(block.int_deltas(3), 2);  // Ev Idx: differences
  std::vector<ArgsEntry> back;
  ASSERT_TRUE(DecodeArgsBlock(bytes, &back).ok());
  EXPECT_EQ(back, entries);
  auto one = FindArgs(bytes, 100);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one, entries[50].json);
  block.add_absolute_keys(3);  // no such key
  EXPECT_TRUE(absl::IsDataLoss(DecodeArgsBlock(block.SerializeAsString(), &back)));
}

// Blocks of format version 5 hold the integers themselves (`ints`); they
// read the same. A block with both columns is damaged, never guessed at.
TEST(ArgsCodec, ReadsVersion5IntegerColumn) {
  const std::vector<ArgsEntry> entries = {{3, R"({"a":5,"b":"x","a":-9223372036854775808})"},
                                          {9, R"({"b":"y","a":9223372036854775807,"c":true})"}};
  proto::ArgsBlock block;
  ASSERT_TRUE(block.ParseFromString(EncodeArgsBlock(entries)));
  ASSERT_EQ(block.int_deltas_size(), 3);  // 5 -> INT64_MIN -> INT64_MAX wrap
  std::vector<ArgsEntry> back;
  ASSERT_TRUE(DecodeArgsBlock(block.SerializeAsString(), &back).ok());
  EXPECT_EQ(back, entries);
  block.clear_int_deltas();
  for (int64_t v : {int64_t{5}, INT64_MIN, INT64_MAX}) block.add_ints(v);
  ASSERT_TRUE(DecodeArgsBlock(block.SerializeAsString(), &back).ok());
  EXPECT_EQ(back, entries);
  auto one = FindArgs(block.SerializeAsString(), 9);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one, entries[1].json);
  block.add_int_deltas(5);
  block.add_int_deltas(0);
  block.add_int_deltas(0);
  EXPECT_TRUE(absl::IsDataLoss(DecodeArgsBlock(block.SerializeAsString(), &back)));
}

// Only an int64's own spelling goes to the ints column; the rest stays text.
TEST(ArgsCodec, IntegersByTheirSpelling) {
  const std::vector<ArgsEntry> entries = {
      {0, R"({"a":-9223372036854775808,"b":0,"c":9223372036854775807,"d":-42})"},
      {1, R"({"a":-9223372036854775809,"b":-0,"c":12345678901234567890,"d":00,"e":1-2,"f":-})"}};
  const std::string bytes = EncodeArgsBlock(entries);
  proto::ArgsBlock block;
  ASSERT_TRUE(block.ParseFromString(bytes));
  ASSERT_EQ(block.int_deltas_size(), 4);  // each key's first: from 0
  EXPECT_EQ(block.int_deltas(0), INT64_MIN);
  EXPECT_EQ(block.int_deltas(1), 0);
  EXPECT_EQ(block.int_deltas(2), INT64_MAX);
  EXPECT_EQ(block.int_deltas(3), -42);
  const std::vector<std::string> texts(block.texts().begin(), block.texts().end());
  EXPECT_EQ(texts, (std::vector<std::string>{"-9223372036854775809", "-0", "12345678901234567890", "00", "1-2", "-"}));
  std::vector<ArgsEntry> back;
  ASSERT_TRUE(DecodeArgsBlock(bytes, &back).ok());
  EXPECT_EQ(back, entries);
}

// One encoder reused block after block writes what a fresh one writes, and
// every text comes back byte for byte: random objects of shared and new keys,
// canonical and other numbers, escapes, whitespace and nesting.
TEST(ArgsCodec, ReusedEncoderWritesWhatAFreshOneWrites) {
  std::mt19937 rng(5);
  const std::vector<std::string> keys = {"a", "External id", "k\\\"q", "", "Seq", "b"};
  const std::vector<std::string> values = {"0", "-7", "123456789012", "007", "-0", "1.5", "\"s\"", "\"\\\"}\"",
                                           "true", "null", "[1,{\"x\":\"]\"}]", "{\"n\":{}}", "9223372036854775808"};
  const std::vector<std::string> gaps = {"", "", "", " ", "\n  ", "\t"};
  auto gap = [&] { return gaps[rng() % gaps.size()]; };
  ArgsBlockEncoder reused;
  for (int block = 0; block < 40; ++block) {
    std::vector<ArgsEntry> entries;
    for (uint32_t slot = rng() % 3; slot < 256; slot += 1 + rng() % 9) {
      std::string json = "{";
      const int fields = rng() % 5;
      const bool spaced = rng() % 3 == 0;
      for (int f = 0; f < fields; ++f) {
        if (f > 0) json += ",";
        json += (spaced ? gap() : "") + "\"" + keys[rng() % keys.size()] + "\"" + (spaced ? gap() : "") + ":" +
                (spaced ? gap() : "") + values[rng() % values.size()] + (spaced ? gap() : "");
      }
      json += rng() % 50 == 0 ? "" : "}";  // now and then not an object at all
      entries.push_back(ArgsEntry{slot, json});
    }
    for (const ArgsEntry& e : entries) reused.Add(e.slot, e.json);
    const std::string bytes = reused.Finish();
    EXPECT_EQ(bytes, EncodeArgsBlock(entries)) << "block " << block;
    std::vector<ArgsEntry> back;
    ASSERT_TRUE(DecodeArgsBlock(bytes, &back).ok());
    EXPECT_EQ(back, entries) << "block " << block;
    proto::ArgsBlock parsed;
    ASSERT_TRUE(parsed.ParseFromString(bytes));
    EXPECT_GT(parsed.int_deltas_size(), 0) << "integers go to their column";
  }
  EXPECT_TRUE(reused.empty());
}

// Differences round-trip whatever the values (wrapping at 64 bits), make
// counting columns small, and a segment they cannot describe is damaged.
TEST(MemorySegmentCodec, RoundTripsAndShrinks) {
  std::mt19937_64 rng(7);
  const int64_t extremes[] = {INT64_MIN, INT64_MAX, 0, -1, 1};
  for (int round = 0; round < 50; ++round) {
    proto::MemorySegment s;
    s.set_first_seq(1000);
    s.set_carried(2);
    uint64_t seq = 100000;
    int64_t in_use = 6'000'000'000;
    for (int i = 0; i < 40; ++i) {
      s.add_ts_delta(static_cast<int64_t>(rng() % 1000));
      in_use += static_cast<int64_t>(rng() % 4096) - 2048;
      s.add_in_use(round % 5 == 0 ? extremes[rng() % 5] : in_use);
      seq += 1 + rng() % 3;
      s.add_alloc_seq(round % 7 == 0 ? rng() : seq);
      s.add_alloc_ts(round % 6 == 0 ? extremes[rng() % 5] : static_cast<int64_t>(seq * 1'000'000));
      const bool freed = rng() % 3 != 0;
      s.add_free_seq(freed ? (round % 7 == 0 ? rng() | 1 : seq + 1 + rng() % 50) : 0);
      s.add_free_ts(freed ? (round % 6 == 0 ? static_cast<int64_t>(rng()) : s.alloc_ts(i) + 1'000'000 * (1 + rng() % 50)) : 0);
      s.add_bytes(static_cast<int64_t>(rng() % 65536));
      s.add_requested(s.bytes(i));
      s.add_addr(rng());
      s.add_op(0);
      s.add_shape(0);
      s.add_data_type(0);
      s.add_region(0);
      s.add_event_id(round % 4 == 0 ? rng() : seq * 3);
    }
    proto::MemorySegment coded = s;
    EncodeSegmentColumns(&coded);
    EXPECT_EQ(coded.coding(), kSegmentDifferences);
    if (round == 1) {  // the counting columns (addresses and sizes stay as they are)
      proto::MemorySegment a = s, b = coded;
      for (proto::MemorySegment* m : {&a, &b}) {
        m->clear_addr();
        m->clear_bytes();
        m->clear_requested();
        m->clear_ts_delta();
        m->clear_op();
        m->clear_shape();
        m->clear_data_type();
        m->clear_region();
      }
      EXPECT_LT(b.ByteSizeLong(), a.ByteSizeLong() * 3 / 5);  // 0.51 when written
    }
    proto::MemorySegment back;
    ASSERT_TRUE(back.ParseFromString(coded.SerializeAsString()));
    ASSERT_TRUE(DecodeSegmentColumns(&back).ok());
    EXPECT_EQ(back.SerializeAsString(), s.SerializeAsString()) << "round " << round;
  }
  proto::MemorySegment plain;
  plain.add_in_use(5);
  ASSERT_TRUE(DecodeSegmentColumns(&plain).ok());  // coding 0: as it is
  EXPECT_EQ(plain.in_use(0), 5);
  proto::MemorySegment unknown;
  unknown.set_coding(2);
  EXPECT_TRUE(absl::IsDataLoss(DecodeSegmentColumns(&unknown)));
  proto::MemorySegment uneven;
  uneven.set_coding(kSegmentDifferences);
  uneven.add_alloc_seq(1);
  EXPECT_TRUE(absl::IsDataLoss(DecodeSegmentColumns(&uneven)));
}

class BuilderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("tt_fmt_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    opts_.output = (dir_ / "t.tracetable").string();
    auto b = TableBuilder::Create(opts_);
    ASSERT_TRUE(b.ok()) << b.status();
    b_ = std::move(*b);
    b_->BeginInput("test", "");
    ASSERT_TRUE(b_->ToRelativePs(0, 0).ok());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Add(EventKind kind, uint32_t track, int64_t ts, std::string_view name,
           std::string_view args = "", uint32_t key = 0) {
    Event e;
    e.kind = kind;
    e.track = track;
    e.ts = ts;
    e.name = b_->Intern(name);
    e.args_json = args;
    e.flow_id = key;
    ASSERT_TRUE(b_->Add(e).ok());
  }
  std::vector<TileRow> AllRows(const Table& t, uint32_t track) {
    std::vector<TileRow> rows;
    for (int c = 0; c < static_cast<int>(t.meta().num_levels()); ++c) {
      EXPECT_TRUE(t.ReadTiles(track, TileSection::kEvents, c, INT64_MIN, INT64_MAX, &rows, nullptr).ok());
    }
    std::sort(rows.begin(), rows.end(), [](const TileRow& a, const TileRow& b) { return a.ts < b.ts; });
    return rows;
  }

  std::filesystem::path dir_;
  BuildOptions opts_;
  std::unique_ptr<TableBuilder> b_;
};

// A table of format version 5 (argument integers as they are, not as
// differences) reads the same; a version this build does not know is
// refused.
TEST_F(BuilderTest, ReadsVersion5TablesRefusesNewerOnes) {
  const uint32_t t = b_->ThreadTrack({"1", true}, {"1", true});
  for (int i = 0; i < 600; ++i) Add(EventKind::kSlice, t, 10 * i, "s", absl::StrCat(R"({"n":)", 7000 + 3 * i, "}"));
  ASSERT_TRUE(b_->Finish().ok());
  auto as_version = [&](uint32_t version) {
    EditTable(opts_.output, [&](std::map<std::string, std::string>* records) {
      for (auto& [key, value] : *records) {
        if (key == kMetaKey) {
          proto::TableMeta meta;
          ASSERT_TRUE(meta.ParseFromString(value));
          meta.set_format_version(version);
          value = meta.SerializeAsString();
        } else if (key[0] == 'A') {
          // One key per object: the running sum of the differences is the
          // ints column of version 5.
          proto::ArgsBlock block;
          ASSERT_TRUE(block.ParseFromString(value));
          ASSERT_EQ(block.keys_size(), 1);
          uint64_t sum = 0;
          for (int64_t d : block.int_deltas()) block.add_ints(static_cast<int64_t>(sum += static_cast<uint64_t>(d)));
          block.clear_int_deltas();
          value = block.SerializeAsString();
        }
      }
    });
  };
  {
    auto table = Table::Open(opts_.output);
    ASSERT_TRUE(table.ok()) << table.status();
    EXPECT_EQ((*table)->meta().format_version(), kFormatVersion);
  }
  as_version(5);
  auto table = Table::Open(opts_.output);
  ASSERT_TRUE(table.ok()) << table.status();
  auto rows = AllRows(**table, t);
  ASSERT_EQ(rows.size(), 600u);
  for (size_t i = 0; i < rows.size(); ++i) {
    auto args = (*table)->Args(rows[i].id);
    ASSERT_TRUE(args.ok()) << args.status();
    EXPECT_EQ(*args, absl::StrCat(R"({"n":)", 7000 + 3 * (rows[i].ts / 10), "}"));
  }
  table->reset();
  as_version(kFormatVersion + 1);
  auto refused = Table::Open(opts_.output);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::StrContains(refused.status().message(), absl::StrCat("format version ", kFormatVersion + 1)))
      << refused.status();
}

TEST_F(BuilderTest, MatchesBeginEndInTimeOrderNotFileOrder) {
  const uint32_t t = b_->ThreadTrack({"1", true}, {"1", true});
  // File order is scrambled; time order is B(a)@10 B(b)@20 E@30 E@40 E@50 B(c)@60.
  Add(EventKind::kEnd, t, 40, "");
  Add(EventKind::kBegin, t, 20, "b", R"({"x":1})");
  Add(EventKind::kBegin, t, 10, "a");
  Add(EventKind::kEnd, t, 30, "", R"({"y":2})");
  Add(EventKind::kEnd, t, 50, "");  // no B left: counted
  Add(EventKind::kBegin, t, 60, "c");  // never ends: incomplete
  Add(EventKind::kSlice, t, 100, "x");
  ASSERT_TRUE(b_->Finish().ok());
  auto table = Table::Open(opts_.output);
  ASSERT_TRUE(table.ok()) << table.status();
  const Table& tt = **table;
  auto rows = AllRows(tt, t);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(tt.String(rows[0].name), "a");
  EXPECT_EQ(rows[0].dur, 30);
  EXPECT_EQ(tt.String(rows[1].name), "b");
  EXPECT_EQ(rows[1].dur, 10);
  EXPECT_EQ(tt.String(rows[2].name), "c");
  EXPECT_TRUE(rows[2].flags & kFlagIncomplete);
  EXPECT_EQ(rows[2].ts + rows[2].dur, 100);  // ends at the trace end
  auto args = tt.Args(rows[1].id);
  ASSERT_TRUE(args.ok());
  EXPECT_EQ(*args, R"({"x":1,"y":2})");
  EXPECT_EQ(tt.meta().skipped_counts().at("E without matching B"), 1u);
  EXPECT_EQ(tt.meta().skipped_counts().at("B without matching E (kept as incomplete)"), 1u);
}

TEST_F(BuilderTest, AsyncPairsMatchByKey) {
  const uint32_t lane = b_->AsyncTrack({"1", true}, "load");
  const uint32_t k1 = b_->Intern("cat:1"), k2 = b_->Intern("cat:2");
  Add(EventKind::kAsyncBegin, lane, 0, "load", "", k1);
  Add(EventKind::kAsyncBegin, lane, 5, "load", "", k2);
  Add(EventKind::kAsyncInstant, lane, 7, "step", "", k1);
  Add(EventKind::kAsyncEnd, lane, 20, "", "", k1);
  Add(EventKind::kAsyncEnd, lane, 9, "", "", k2);
  ASSERT_TRUE(b_->Finish().ok());
  auto table = Table::Open(opts_.output);
  ASSERT_TRUE(table.ok());
  auto rows = AllRows(**table, lane);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].dur, 20);
  EXPECT_EQ(rows[1].dur, 4);
  EXPECT_EQ(rows[2].kind, EventKind::kInstant);
  EXPECT_NE(rows[0].lane, rows[1].lane);  // overlapping: separate lanes
}

TEST_F(BuilderTest, FailedBuildLeavesNothing) {
  b_.reset();  // destroyed before Finish
  EXPECT_FALSE(std::filesystem::exists(opts_.output));
  for (const auto& e : std::filesystem::directory_iterator(dir_)) ADD_FAILURE() << e.path();
}

TEST_F(BuilderTest, EveryIngestGetsItsOwnIdentity) {
  const uint32_t t = b_->ThreadTrack({"1", true}, {"1", true});
  Add(EventKind::kSlice, t, 100, "x");
  ASSERT_TRUE(b_->Finish().ok());
  std::string first;
  {
    auto table = Table::Open(opts_.output);
    ASSERT_TRUE(table.ok()) << table.status();
    first = (*table)->identity();
    EXPECT_EQ(first, (*table)->meta().table_id());
    EXPECT_EQ(first.size(), 32u);
  }
  // The same events again, over the same path: a new identity.
  BuildOptions again = opts_;
  again.overwrite = true;
  auto b = TableBuilder::Create(again);
  ASSERT_TRUE(b.ok()) << b.status();
  (*b)->BeginInput("test", "");
  ASSERT_TRUE((*b)->ToRelativePs(0, 0).ok());
  Event e;
  e.track = (*b)->ThreadTrack({"1", true}, {"1", true});
  e.ts = 100;
  e.name = (*b)->Intern("x");
  ASSERT_TRUE((*b)->Add(e).ok());
  ASSERT_TRUE((*b)->Finish().ok());
  auto table = Table::Open(opts_.output);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_NE((*table)->identity(), first);
}

TEST(TableOpen, RejectsWhatIsNotATable) {
  auto dir = std::filesystem::temp_directory_path() / ("tt_open_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto r = Table::Open(dir.string());
  EXPECT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("not a tracetable"), std::string::npos);
  EXPECT_FALSE(Table::Open((dir / "missing").string()).ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tracetable
