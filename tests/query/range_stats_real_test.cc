// Range statistics from the aggregates (query/range_stats_index.h) on every
// real trace in shared/traces, field by field against the brute force of
// tests/query/range_stats_reference.h: whole span, bucket-aligned and random
// ranges, with and without a track filter. Buckets of about 64 events, so
// even small traces spread over many buckets and levels.
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "format/stats_codec.h"
#include "gtest/gtest.h"
#include "ingest/input.h"
#include "query/range_stats.h"
#include "store/table.h"
#include "store/table_builder.h"
#include "tests/query/range_stats_reference.h"
#include "tests/shared_traces.h"
#include "tests/query/random_trace.h"

namespace tracetable {
namespace {

using namespace tracetable::testing;

class RealRangeStats : public ::testing::TestWithParam<std::string> {};

TEST_P(RealRangeStats, AggregatesMatchBruteForce) {
  TempDir dir;
  BuildOptions opts;
  opts.output = dir.Sub("t.tracetable");
  opts.stats_bucket_events = 64;
  absl::StatusOr<std::vector<InputFile>> files = ExpandInputs({GetParam()});
  ASSERT_TRUE(files.ok()) << files.status();
  absl::StatusOr<std::unique_ptr<TableBuilder>> b = TableBuilder::Create(opts);
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_TRUE(ReadInputs(*files, b->get(), {}).ok());
  ASSERT_TRUE((*b)->Finish().ok());
  absl::StatusOr<std::unique_ptr<Table>> opened = Table::Open(opts.output);
  ASSERT_TRUE(opened.ok()) << opened.status();
  const Table& t = **opened;
  ASSERT_TRUE(t.meta().has_stats_index());
  RangeStatsReference ref(t);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  const int64_t lo = t.meta().min_ts(), hi = t.meta().max_end();
  const StatsGrid g{lo, t.meta().stats_index().bucket_log2(), t.meta().stats_index().levels()};
  std::mt19937_64 rng(17);
  auto any = [&] { return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1)); };
  for (int i = 0; i < 24; ++i) {
    int64_t a = lo, c = hi;
    if (i > 0) {
      a = any();
      c = any();
      if (a > c) std::swap(a, c);
      if (i % 3 == 1) {  // bucket-aligned edges
        a = BucketStart(g, OwningBucket(g, a, 0));
        c = BucketStart(g, OwningBucket(g, c, 0));
      }
    }
    std::vector<uint32_t> tracks;
    if (i % 4 == 3) {
      for (int k = 0; k < t.resources().tracks_size(); k += 2) tracks.push_back(static_cast<uint32_t>(k));
    }
    SCOPED_TRACE(::testing::Message() << "[" << a << ", " << c << "] on " << tracks.size() << " tracks");
    absl::StatusOr<RangeStats> got = ComputeRangeStats(t, tracks, a, c, 1);
    ASSERT_TRUE(got.ok()) << got.status();
    ref.Expect(*got, tracks, a, c);
    ASSERT_FALSE(::testing::Test::HasFailure());
  }
}

INSTANTIATE_TEST_SUITE_P(Shared, RealRangeStats, ::testing::ValuesIn(SharedTraces()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = std::filesystem::path(info.param).filename().string();
                           for (char& ch : n) {
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n + "_" + std::to_string(info.index);
                         });

}  // namespace
}  // namespace tracetable
