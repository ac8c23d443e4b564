// Range statistics over a run of shards ingested with range aggregates
// (query/run_range_stats.h) answer exactly as one table of the same inputs:
// random hosts (nested slices, B/E with begins left open, instants,
// counters, async slices) on other spans and origins, ingested once as one
// table and once per host with --stats-bucket-events; every field of random
// ranges (edges inside buckets, ranges past either end, one-point ranges,
// track subsets) is compared, and shards answer from their aggregates (few
// events read) wherever that is exact. A shard without aggregates, or whose
// open begins end before the run does, is read from its events: same
// answers, or truncated past the cap, never different. Search totals use
// the same route.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ingest/input.h"
#include "query/range_stats.h"
#include "query/run_range_stats.h"
#include "query/search_count.h"
#include "store/run_shards.h"
#include "store/run_table.h"
#include "store/table.h"
#include "store/table_builder.h"
#include "tests/runs/real_trace_hosts.h"

namespace tracetable {
namespace {

namespace fs = std::filesystem;

// Host `h`: events over [first, first + span] us. `open_begins`: some B
// without an E (kept as incomplete, lasting to the table's end).
std::string HostTrace(int h, uint32_t seed, int64_t first, int span, bool open_begins) {
  std::mt19937 rng(seed);
  auto rnd = [&rng](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
  std::ostringstream o;
  o << "{\"traceEvents\":[\n{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":\"w"
    << h << "\"}}";
  const int n = 600 + rnd(600);
  for (int i = 0; i < n; ++i) {
    const int64_t ts = first + rnd(span);
    const int tid = 1 + rnd(3);
    switch (rnd(8)) {
      case 0:
      case 1: {  // a slice with nested children
        const int dur = 50 + rnd(3000);
        o << ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":" << tid << ",\"ts\":" << ts << ",\"dur\":" << dur
          << ",\"name\":\"outer" << rnd(3) << "\"}";
        for (int c = 0; c < rnd(4); ++c) {
          const int cts = rnd(dur - 10), cd = rnd(dur - cts);
          o << ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":" << tid << ",\"ts\":" << ts + cts << "." << rnd(1000)
            << ",\"dur\":" << cd << ",\"name\":\"op" << rnd(6) << "\"}";
        }
        break;
      }
      case 2:
        o << ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":" << tid << ",\"ts\":" << ts << "." << rnd(1000)
          << ",\"dur\":" << rnd(40) << ",\"name\":\"op" << rnd(6) << "\"}";
        break;
      case 3:
        o << ",\n{\"ph\":\"B\",\"pid\":1,\"tid\":" << tid << ",\"ts\":" << ts << ",\"name\":\"be" << rnd(3) << "\"}";
        if (!open_begins || rnd(20) != 0) {
          o << ",\n{\"ph\":\"E\",\"pid\":1,\"tid\":" << tid << ",\"ts\":" << ts + rnd(300) << "}";
        }
        break;
      case 4:
        o << ",\n{\"ph\":\"i\",\"pid\":1,\"tid\":" << tid << ",\"ts\":" << ts << ",\"s\":\"t\",\"name\":\"mark"
          << rnd(3) << "\"}";
        break;
      case 5:
        o << ",\n{\"ph\":\"C\",\"pid\":1,\"ts\":" << ts << ",\"name\":\"load\",\"args\":{\"v\":" << rnd(100) << "}}";
        break;
      case 6: {
        const int id = rnd(4);
        o << ",\n{\"ph\":\"b\",\"pid\":1,\"tid\":" << tid << ",\"ts\":" << ts << ",\"id\":\"a" << id
          << "\",\"name\":\"req" << id << "\",\"cat\":\"c\"},\n{\"ph\":\"e\",\"pid\":1,\"tid\":" << tid
          << ",\"ts\":" << ts + rnd(2000) << ",\"id\":\"a" << id << "\",\"name\":\"req" << id
          << "\",\"cat\":\"c\"}";
        break;
      }
      default:
        o << ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":" << tid << ",\"ts\":" << ts << ",\"dur\":0,\"name\":\"tick\"}";
    }
  }
  o << "\n]}\n";
  return o.str();
}

struct Host {
  int64_t first;
  int span;
  bool open_begins;
};

class RunStatsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / absl::StrCat("tt_run_stats_",
                                                    ::testing::UnitTest::GetInstance()->current_test_info()->name(),
                                                    "_", getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "in");
    fs::create_directories(dir_ / "run" / "shards");
  }
  void TearDown() override { fs::remove_all(dir_); }

  static void Build(const std::vector<std::string>& inputs, const std::string& out, uint64_t bucket_events) {
    absl::StatusOr<std::vector<InputFile>> files = ExpandInputs(inputs);
    ASSERT_TRUE(files.ok()) << files.status();
    BuildOptions opts;
    opts.output = out;
    opts.stats_bucket_events = bucket_events;
    absl::StatusOr<std::unique_ptr<TableBuilder>> b = TableBuilder::Create(opts);
    ASSERT_TRUE(b.ok()) << b.status();
    ASSERT_TRUE(ReadInputs(*files, b->get(), {}).ok());
    ASSERT_TRUE((*b)->Finish().ok());
  }

  // One table of every host, and one shard per host; `plain` shards have no
  // aggregates.
  void MakeBoth(const std::vector<Host>& hosts, uint32_t seed, uint64_t bucket_events,
                const std::vector<int>& plain = {}) {
    for (size_t h = 0; h < hosts.size(); ++h) {
      std::ofstream(dir_ / "in" / absl::StrCat("host", h, ".json"))
          << HostTrace(static_cast<int>(h), seed * 100 + static_cast<uint32_t>(h), hosts[h].first, hosts[h].span,
                       hosts[h].open_begins);
    }
    std::vector<std::string> files;
    for (size_t h = 0; h < hosts.size(); ++h) files.push_back(absl::StrCat("host", h, ".json"));
    BuildBoth(files, bucket_events, plain);
  }
  // in/`files` (in name order) as one table and as one shard each (host:
  // the name up to its first dot); `plain` shards have no aggregates.
  void BuildBoth(const std::vector<std::string>& files, uint64_t bucket_events, const std::vector<int>& plain = {}) {
    Build({(dir_ / "in").string()}, Single(), bucket_events);
    for (size_t h = 0; h < files.size(); ++h) {
      const std::string host = files[h].substr(0, files[h].find('.'));
      const std::string shard = (dir_ / "run" / "shards" / (host + ".tracetable")).string();
      const bool without = std::find(plain.begin(), plain.end(), static_cast<int>(h)) != plain.end();
      Build({(dir_ / "in" / files[h]).string()}, shard, without ? 0 : bucket_events);
      sources_.push_back(RunShardSource{host, shard, ""});
    }
    absl::StatusOr<std::unique_ptr<Table>> one = Table::Open(Single());
    ASSERT_TRUE(one.ok()) << one.status();
    one_ = std::move(*one);
    ASSERT_TRUE(one_->meta().has_stats_index());
    Table::Options o;
    o.max_open_shards = 2;
    absl::StatusOr<std::unique_ptr<Table>> run =
        OpenRunTable((dir_ / "run").string(), one_->meta().origin_ns(), sources_, o);
    ASSERT_TRUE(run.ok()) << run.status();
    run_ = std::move(*run);
  }
  std::string Single() const { return (dir_ / "single.tracetable").string(); }

  // Random ranges and track sets; every field equal. Returns the events the
  // run read one by one, summed.
  uint64_t CompareRandomRanges(uint32_t seed, int n, uint64_t cap) {
    std::mt19937_64 rng(seed);
    const int64_t lo = one_->meta().min_ts(), hi = one_->meta().max_end(), span = hi - lo;
    const int num_tracks = one_->resources().tracks_size();
    EXPECT_EQ(num_tracks, run_->resources().tracks_size());
    uint64_t events = 0;
    for (int k = 0; k < n; ++k) {
      int64_t a = lo - span / 20 + static_cast<int64_t>(rng() % static_cast<uint64_t>(span + span / 10));
      // Lengths from one point to past the whole span, most of them short.
      const int64_t len = k % 7 == 0 ? 0 : static_cast<int64_t>(rng() % static_cast<uint64_t>(span >> (rng() % 16)));
      int64_t b = a + len;
      if (k == 0) a = lo, b = hi;
      if (k == 1) a = lo - 5, b = hi + 5;
      std::vector<uint32_t> tracks;
      if (k % 3 == 1) {
        for (int t = 0; t < num_tracks; ++t) {
          if (rng() % 3 == 0) tracks.push_back(static_cast<uint32_t>(t));
        }
        if (tracks.empty()) tracks.push_back(0);
      }
      SCOPED_TRACE(absl::StrCat("range ", k, ": [", a, ", ", b, "], ", tracks.size(), " tracks"));
      absl::StatusOr<RangeStats> want = ComputeRangeStats(*one_, tracks, a, b, cap);
      absl::StatusOr<RangeStats> got = ComputeRangeStats(*run_, tracks, a, b, cap);
      EXPECT_TRUE(want.ok()) << want.status();
      EXPECT_TRUE(got.ok()) << got.status();
      if (!want.ok() || !got.ok()) return events;
      ExpectSame(*want, *got);
      events += got->events;
    }
    return events;
  }

  void ExpectSame(const RangeStats& want, const RangeStats& got) {
    EXPECT_FALSE(want.truncated);
    EXPECT_FALSE(got.truncated);
    EXPECT_EQ(want.covered_to, got.covered_to);
    ASSERT_EQ(want.tracks.size(), got.tracks.size());
    for (size_t i = 0; i < want.tracks.size(); ++i) {
      EXPECT_EQ(want.tracks[i].first, got.tracks[i].first) << i;
      ExpectAgg(want.tracks[i].second, got.tracks[i].second, absl::StrCat("track ", want.tracks[i].first));
    }
    ASSERT_EQ(want.names.size(), got.names.size());
    for (size_t i = 0; i < want.names.size(); ++i) {
      EXPECT_EQ(one_->String(want.names[i].first), run_->String(got.names[i].first)) << i;
      ExpectAgg(want.names[i].second, got.names[i].second, std::string(one_->String(want.names[i].first)));
    }
  }
  static void ExpectAgg(const RangeAgg& w, const RangeAgg& g, const std::string& what) {
    EXPECT_EQ(w.count, g.count) << what;
    EXPECT_EQ(w.slices, g.slices) << what;
    EXPECT_EQ(w.total, g.total) << what;
    EXPECT_EQ(w.self, g.self) << what;
    EXPECT_EQ(w.min, g.min) << what;
    EXPECT_EQ(w.max, g.max) << what;
  }

  fs::path dir_;
  std::vector<RunShardSource> sources_;
  std::unique_ptr<Table> one_, run_;
};

// Every shard answers from its aggregates: open begins only on the host that
// ends last (they last to the run's end in its shard too).
TEST_F(RunStatsTest, ShardsAggregatesAnswerAsOneTable) {
  MakeBoth({{1000, 90000, false}, {1700, 150000, true}, {5000, 40000, false}, {900, 60000, false}}, 1, 16);
  ASSERT_TRUE(RunAnswersFromAggregates(*run_, {}));
  const uint64_t events = CompareRandomRanges(11, 400, 1);  // a cap of 1: only aggregates can answer
  // The whole range, from the aggregates: a few edge events, not all of them.
  absl::StatusOr<RangeStats> whole = ComputeRangeStats(*run_, {}, run_->meta().min_ts(), run_->meta().max_end(), 1);
  ASSERT_TRUE(whole.ok());
  EXPECT_LT(whole->events, run_->meta().num_events() / 10);
  EXPECT_GT(events, 0u);
  EXPECT_LE(run_->run()->open_shards(), 2u);
}

// A host with begins left open that ends before the run: in its shard they
// end at its own end, in the run at the run's, so its tracks are read from
// the events (exact under the cap); the others still use aggregates.
TEST_F(RunStatsTest, OpenBeginsEndingBeforeTheRunAreReadFromEvents) {
  MakeBoth({{1000, 150000, false}, {1700, 50000, true}, {3000, 80000, true}}, 2, 16);
  const RunShards& run = *run_->run();
  std::vector<uint32_t> routed, read;
  for (uint32_t t = 0; t < static_cast<uint32_t>(run_->resources().tracks_size()); ++t) {
    (run.home(t).shard == 0 ? routed : read).push_back(t);
  }
  EXPECT_TRUE(RunAnswersFromAggregates(*run_, routed));
  EXPECT_FALSE(RunAnswersFromAggregates(*run_, read));
  EXPECT_FALSE(RunAnswersFromAggregates(*run_, {}));
  CompareRandomRanges(12, 300, 10'000'000);
}

// A shard without aggregates: its tracks are read from the events, exactly
// under the cap; past it the whole answer says it is truncated.
TEST_F(RunStatsTest, ShardWithoutAggregatesIsReadOrTruncated) {
  MakeBoth({{1000, 90000, false}, {1200, 90000, false}, {1400, 90000, false}}, 3, 16, /*plain=*/{1});
  EXPECT_FALSE(RunAnswersFromAggregates(*run_, {}));
  CompareRandomRanges(13, 300, 10'000'000);
  const int64_t a = run_->meta().min_ts(), b = run_->meta().max_end();
  absl::StatusOr<RangeStats> capped = ComputeRangeStats(*run_, {}, a, b, 20);
  ASSERT_TRUE(capped.ok()) << capped.status();
  EXPECT_TRUE(capped->truncated);
  EXPECT_LT(capped->covered_to, b);
  // Up to where it says it counted, the capped answer holds no more than
  // the whole range's (a partial answer, never a larger one).
  absl::StatusOr<RangeStats> whole = ComputeRangeStats(*one_, {}, a, b, 10'000'000);
  ASSERT_TRUE(whole.ok());
  uint64_t capped_count = 0, whole_count = 0;
  for (const auto& [t, agg] : capped->tracks) capped_count += agg.count;
  for (const auto& [t, agg] : whole->tracks) whole_count += agg.count;
  EXPECT_LT(capped_count, whole_count);
}

// Real traces of other projects as the hosts of a run (JSON of Kineto and
// catapult, an XSpace): whatever they hold (begins left open, counters,
// async slices, clocks far apart), every range answers as one table.
TEST_F(RunStatsTest, RealTracesAsHosts) {
  const fs::path shared(TRACETABLE_SHARED_TRACES);
  int n = 0;
  for (const auto& group : RealTraceHostGroups()) {
    if (!fs::exists(shared / group[0])) GTEST_SKIP() << "no shared traces at " << shared;
    TearDown();
    SetUp();
    sources_.clear();
    const std::vector<std::string> files = CopyHostGroup(shared, group, dir_ / "in");
    SCOPED_TRACE(absl::StrCat("group ", n));
    BuildBoth(files, 64);
    CompareRandomRanges(20 + n++, 150, 10'000'000);
  }
}

// Search totals over a run come from the shards' aggregates when they all
// have them, and equal one table's.
TEST_F(RunStatsTest, SearchTotalsFromShardsAggregates) {
  MakeBoth({{1000, 90000, false}, {1700, 150000, true}, {5000, 40000, false}}, 4, 16);
  std::mt19937_64 rng(5);
  const int64_t lo = one_->meta().min_ts(), span = one_->meta().max_end() - lo;
  for (const char* q : {"op", "outer1", "be", "req", "tick", "mark2"}) {
    for (int k = 0; k < 20; ++k) {
      SearchRequest one_req, run_req;
      one_req.names = NamesContaining(*one_, q, false);
      run_req.names = NamesContaining(*run_, q, false);
      for (int t = 0; t < one_->resources().tracks_size(); ++t) {
        one_req.tracks.push_back(static_cast<uint32_t>(t));
        run_req.tracks.push_back(static_cast<uint32_t>(t));
      }
      one_req.start = run_req.start = lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(span));
      one_req.end = run_req.end = one_req.start + static_cast<int64_t>(rng() % static_cast<uint64_t>(span));
      absl::StatusOr<SearchCount> want = CountMatches(*one_, one_req, std::chrono::milliseconds(100000));
      absl::StatusOr<SearchCount> got = CountMatches(*run_, run_req, std::chrono::milliseconds(0), 1);
      ASSERT_TRUE(want.ok() && got.ok());
      // A zero budget and pages of one: only the aggregates finish exactly.
      EXPECT_TRUE(got->exact) << q;
      EXPECT_EQ(want->total, got->total) << q << " [" << one_req.start << ", " << one_req.end << "]";
    }
  }
}

}  // namespace
}  // namespace tracetable
