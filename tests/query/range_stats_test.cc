// Range statistics (query/range_stats.h): per name count, slices, total,
// min and max and per track count and total against a brute force over
// random traces and random ranges (real LevelDB tables), and every field
// (self time too) against the brute force of tests/query/range_stats_reference.h
// on many ranges and track filters, from the aggregates at several bucket
// sizes and from the events of a table without them; self time on a
// hand-made nested table whose answer is worked out by hand; the cap gives
// a partial answer marked as such (tables without aggregates only).
#include <algorithm>
#include <map>
#include <random>

#include "gtest/gtest.h"
#include "query/range_stats.h"
#include "query/range_stats_edges.h"
#include "query/window.h"
#include "format/stats_codec.h"
#include "tests/query/random_trace.h"
#include "tests/query/range_stats_reference.h"

namespace tracetable {
namespace {

using namespace tracetable::testing;

struct Ref {
  uint64_t count = 0, slices = 0;
  int64_t total = 0, min = 0, max = 0;
};

TEST(RangeStats, RandomTracesMatchBruteForce) {
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE(seed);
    RandomTable random;
    ASSERT_TRUE(random.Build(seed, 1ull << 30, seed % 2 ? 0 : 512));  // from events, from aggregates
    const Trace& tr = random.trace;
    const Table& t = *random.table;
    std::mt19937_64 rng(seed * 31);
    const int64_t lo = t.meta().min_ts(), hi = t.meta().max_end();
    for (int w = 0; w < 8; ++w) {
      int64_t a = lo, b = hi;
      if (w > 0) {
        a = lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
        b = std::min(hi, a + static_cast<int64_t>(rng() % static_cast<uint64_t>((hi - lo) / (1 + w) + 1)));
      }
      SCOPED_TRACE(::testing::Message() << "[" << a << ", " << b << "]");
      std::map<uint32_t, Ref> names, tracks;
      std::map<uint32_t, const RefEvent*> carry;
      for (const RefEvent& e : tr.events) {
        if (tr.counter_track[e.track]) {
          if (e.ts < a) {
            const RefEvent*& c = carry[e.track];
            if (!c || std::tie(e.ts, e.id) > std::tie(c->ts, c->id)) c = &e;
          } else if (e.ts <= b) {
            ++tracks[e.track].count;
          }
          continue;
        }
        if (!(e.ts <= b && e.ts + e.dur >= a)) continue;
        Ref& n = names[e.name];
        Ref& k = tracks[e.track];
        ++n.count;
        ++k.count;
        if (e.kind != EventKind::kSlice) continue;
        const int64_t c = std::max<int64_t>(0, std::min(e.ts + e.dur, b) - std::max(e.ts, a));
        n.total += c;
        k.total += c;
        n.min = n.slices == 0 ? c : std::min(n.min, c);
        n.max = std::max(n.max, c);
        ++n.slices;
      }
      for (const auto& [track, e] : carry) ++tracks[track].count;
      absl::StatusOr<RangeStats> got = ComputeRangeStats(t, {}, a, b, 10'000'000);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_FALSE(got->truncated);
      EXPECT_EQ(got->covered_to, b);
      ASSERT_EQ(got->names.size(), names.size());
      for (const auto& [name, g] : got->names) {
        const Ref& want = names[name];
        EXPECT_EQ(g.count, want.count) << name;
        EXPECT_EQ(g.slices, want.slices) << name;
        EXPECT_EQ(g.total, want.total) << name;
        EXPECT_EQ(g.min, want.min) << name;
        EXPECT_EQ(g.max, want.max) << name;
        EXPECT_GE(g.self, 0);
        EXPECT_LE(g.self, g.total);
      }
      ASSERT_EQ(got->tracks.size(), tracks.size());
      for (const auto& [track, g] : got->tracks) {
        EXPECT_EQ(g.count, tracks[track].count) << track;
        EXPECT_EQ(g.total, tracks[track].total) << track;
      }
      for (size_t i = 1; i < got->names.size(); ++i) EXPECT_GE(got->names[i - 1].second.self, got->names[i].second.self);
    }
  }
}

// Ranges that hit the aggregates' corner cases: the whole span and beyond,
// bucket-aligned edges at every level (and one ps off them), ranges inside
// one level-0 bucket, points, and random ones.
std::vector<std::pair<int64_t, int64_t>> Ranges(const Table& t, std::mt19937_64& rng, int n) {
  const int64_t lo = t.meta().min_ts(), hi = t.meta().max_end();
  std::vector<std::pair<int64_t, int64_t>> out = {{lo, hi}, {lo - 5, hi + 5}, {lo, lo}, {hi, hi}};
  auto any = [&] { return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1)); };
  const proto::StatsIndexInfo& info = t.meta().stats_index();
  const StatsGrid g{lo, info.bucket_log2(), std::max<uint32_t>(info.levels(), 1)};
  for (int i = 0; i < n; ++i) {
    int64_t a = any(), b = any();
    if (a > b) std::swap(a, b);
    if (t.meta().has_stats_index()) {
      const BucketId x = OwningBucket(g, a, 0), y = OwningBucket(g, b, 0);
      const uint32_t level = static_cast<uint32_t>(rng() % g.levels);
      const BucketId up{level, x.index >> level};
      switch (i % 6) {
        case 0: a = BucketStart(g, x); b = BucketStart(g, y); break;         // aligned edges
        case 1: a = BucketStart(g, up); b = BucketEnd(g, up); break;         // one bucket, closed at its end
        case 2: a = BucketStart(g, up) + 1; b = BucketEnd(g, up) - 1; break;  // just inside it
        case 3: a = BucketStart(g, x); b = BucketEnd(g, x) - 1; break;       // one level-0 bucket
        case 4: b = std::min(b, a + (int64_t{1} << g.log2) / 3); break;    // narrow
        default: break;                                                    // random
      }
    }
    out.emplace_back(a, b);
  }
  return out;
}

std::vector<uint32_t> SomeTracks(const Table& t, std::mt19937_64& rng) {
  std::vector<uint32_t> out;
  for (int i = 0; i < t.resources().tracks_size(); ++i) {
    if (rng() % 3 == 0) out.push_back(static_cast<uint32_t>(i));
  }
  if (out.empty()) out.push_back(0);
  return out;
}

TEST(RangeStats, EveryFieldMatchesBruteForceFromAggregatesAndFromEvents) {
  for (uint64_t per_bucket : {uint64_t{0}, uint64_t{2}, uint64_t{16}, uint64_t{512}}) {
    for (uint32_t seed = 1; seed <= 4; ++seed) {
      SCOPED_TRACE(::testing::Message() << "seed " << seed << ", events per bucket " << per_bucket);
      RandomTable random;
      ASSERT_TRUE(random.Build(seed, 1ull << 30, per_bucket));
      const Table& t = *random.table;
      ASSERT_EQ(t.meta().has_stats_index(), per_bucket > 0);
      RangeStatsReference ref(t);
      ASSERT_FALSE(::testing::Test::HasFatalFailure());
      std::mt19937_64 rng(seed * 7 + per_bucket);
      int i = 0;
      for (const auto& [a, b] : Ranges(t, rng, 60)) {
        const std::vector<uint32_t> tracks = i++ % 4 == 3 ? SomeTracks(t, rng) : std::vector<uint32_t>{};
        SCOPED_TRACE(::testing::Message() << "[" << a << ", " << b << "] on " << tracks.size() << " tracks");
        absl::StatusOr<RangeStats> got = ComputeRangeStats(t, tracks, a, b, 10'000'000);
        ASSERT_TRUE(got.ok()) << got.status();
        ref.Expect(*got, tracks, a, b);
        ASSERT_FALSE(::testing::Test::HasFailure());
      }
    }
  }
}

// The edge reader (query/range_stats_edges.h) against a brute force over the
// track's whole resolution-0 window: random spans and covers, storage levels
// read in pieces of one row (many piece edges) and of all rows at once.
TEST(RangeStats, RestRowsMatchBruteForceAtAnyPieceSize) {
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE(seed);
    RandomTable random;
    ASSERT_TRUE(random.Build(seed, 1ull << 30, 16));
    const Table& t = *random.table;
    const int64_t lo = t.meta().min_ts(), hi = t.meta().max_end();
    const StatsGrid g{lo, t.meta().stats_index().bucket_log2(), t.meta().stats_index().levels()};
    WindowRequest all;
    all.start = lo;
    all.end = hi;
    absl::StatusOr<WindowResult> every = QueryWindow(t, all);
    ASSERT_TRUE(every.ok()) << every.status();
    std::mt19937_64 rng(seed);
    auto any = [&] { return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1)); };
    for (int round = 0; round < 12; ++round) {
      std::vector<std::pair<int64_t, int64_t>> spans;
      for (int k = 1 + static_cast<int>(rng() % 3); k > 0; --k) {
        int64_t a = any(), b = round % 3 == 0 ? a : any();
        spans.emplace_back(std::min(a, b), std::max(a, b));
      }
      int64_t ca = any(), cb = any();
      const std::vector<BucketId> cover = CoverBuckets(g, std::min(ca, cb), std::max(ca, cb));
      CoverSpan cs{&g, !cover.empty() && round % 4 != 0, 0, 0};
      if (cs.any) {
        cs.lo = BucketStart(g, cover.front());
        cs.hi = BucketEnd(g, cover.back());
      }
      for (uint32_t track = 0; track < static_cast<uint32_t>(t.resources().tracks_size()); ++track) {
        if (t.resources().tracks(static_cast<int>(track)).kind() == proto::Track::COUNTER) continue;
        std::vector<StatsRow> want;
        for (const WindowItem& it : every->items) {
          if (it.track != track) continue;
          const TileRow& r = it.row;
          bool in = false;
          for (const auto& [a, b] : spans) in |= r.ts <= b && r.ts + r.dur >= a;
          const BucketId own = OwningBucket(g, r.ts, r.dur);
          if (in && !(cs.any && BucketStart(g, own) >= cs.lo && BucketEnd(g, own) <= cs.hi)) {
            want.push_back({r.ts, r.dur, r.id, r.name, r.lane, r.kind});
          }
        }
        std::sort(want.begin(), want.end(), StatsOrder);
        for (uint64_t chunk_rows : {uint64_t{1}, uint64_t{1} << 40}) {
          SCOPED_TRACE(::testing::Message() << "round " << round << " track " << track << " chunk " << chunk_rows);
          std::vector<TileRow> scratch;
          std::vector<StatsRow> tmp, got;
          ASSERT_TRUE(ReadRestRows(t, track, spans, cs, &scratch, &tmp, &got, chunk_rows).ok());
          ASSERT_EQ(got.size(), want.size());
          for (size_t i = 0; i < got.size(); ++i) {
            EXPECT_EQ(std::tie(got[i].ts, got[i].dur, got[i].id, got[i].name, got[i].lane, got[i].kind),
                      std::tie(want[i].ts, want[i].dur, want[i].id, want[i].name, want[i].lane, want[i].kind));
          }
        }
      }
    }
  }
}

// parent [0, 100) with children [10, 30) and [50, 90), the second with a
// grandchild [60, 70); an instant at 40. Range [20, 80].
class RangeStatsNested : public ::testing::TestWithParam<uint64_t> {
 protected:
  void SetUp() override {
    BuildOptions opts;
    opts.output = dir_.Sub("t.tracetable");
    opts.stats_bucket_events = GetParam();
    auto b = TableBuilder::Create(opts);
    ASSERT_TRUE(b.ok());
    TableBuilder& builder = **b;
    builder.BeginInput("hand", "");
    ASSERT_TRUE(builder.ToRelativePs(0, 0).ok());
    const uint32_t thread = builder.ThreadTrack({"1", true}, {"1", true});
    auto add = [&](EventKind kind, int64_t ts, int64_t dur, const char* name) {
      Event e;
      e.kind = kind;
      e.track = thread;
      e.ts = ts;
      e.dur = dur;
      e.name = builder.Intern(name);
      ASSERT_TRUE(builder.Add(e).ok());
    };
    add(EventKind::kSlice, 0, 100, "parent");
    add(EventKind::kSlice, 10, 20, "child");
    add(EventKind::kSlice, 50, 40, "child");
    add(EventKind::kSlice, 60, 10, "leaf");
    add(EventKind::kInstant, 40, 0, "mark");
    ASSERT_TRUE(builder.Finish().ok());
    auto t = Table::Open(opts.output);
    ASSERT_TRUE(t.ok());
    table_ = std::move(*t);
  }
  RangeAgg Of(const RangeStats& s, const char* name) {
    for (const auto& [id, a] : s.names) {
      if (table_->String(id) == name) return a;
    }
    ADD_FAILURE() << "no " << name;
    return {};
  }
  TempDir dir_;
  std::unique_ptr<Table> table_;
};

TEST_P(RangeStatsNested, SelfTimeIsClippedTimeMinusDirectChildren) {
  const int64_t base = table_->meta().min_ts();
  absl::StatusOr<RangeStats> s = ComputeRangeStats(*table_, {}, base + 20, base + 80, 1000);
  ASSERT_TRUE(s.ok()) << s.status();
  // parent: 60 in range, children cover [20,30) and [50,80): self 60 - 10 - 30.
  const RangeAgg parent = Of(*s, "parent"), child = Of(*s, "child"), leaf = Of(*s, "leaf"), mark = Of(*s, "mark");
  EXPECT_EQ(parent.total, 60);
  EXPECT_EQ(parent.self, 20);
  EXPECT_EQ(child.count, 2u);
  EXPECT_EQ(child.total, 10 + 30);
  EXPECT_EQ(child.self, 10 + 30 - 10);
  EXPECT_EQ(child.min, 10);
  EXPECT_EQ(child.max, 30);
  EXPECT_EQ(leaf.self, 10);
  EXPECT_EQ(mark.count, 1u);
  EXPECT_EQ(mark.slices, 0u);
  EXPECT_EQ(mark.total, 0);
  EXPECT_EQ(s->names.front().second.self, 30);  // "child" first: most self time
}

TEST_P(RangeStatsNested, CapGivesAMarkedPartialAnswerOnlyWithoutAggregates) {
  const int64_t base = table_->meta().min_ts();
  if (GetParam() > 0) {
    absl::StatusOr<RangeStats> s = ComputeRangeStats(*table_, {}, base, base + 100, 2);
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_FALSE(s->truncated);
    EXPECT_EQ(s->covered_to, base + 100);
    return;
  }
  absl::StatusOr<RangeStats> s = ComputeRangeStats(*table_, {}, base, base + 100, 2);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(s->truncated);
  EXPECT_LT(s->covered_to, base + 100);
  EXPECT_LE(s->events, 2u);
}

// 0: no aggregates (older tables); 1: aggregates in buckets of about one event.
INSTANTIATE_TEST_SUITE_P(Buckets, RangeStatsNested, ::testing::Values(uint64_t{0}, uint64_t{1}, uint64_t{16384}));

}  // namespace
}  // namespace tracetable
