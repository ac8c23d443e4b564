// A run built from a folder (cli/run_ingest.h) holds, shard by shard, what
// one table of the same inputs holds for that input: the same origin, grid,
// counts, tracks, and every tile row (times, names, lanes, counts) of every
// level, so merging shards can answer as the single table does.
#include "cli/run_ingest.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "store/table.h"

namespace tracetable::cli {
namespace {
namespace fs = std::filesystem;

// Hosts that start, end and nest differently, with B/E, instants, counters
// and flows, so their own grids differ from the run's.
std::string HostTrace(int host) {
  std::mt19937 rng(1000 + host);
  auto rnd = [&rng](int n) { return static_cast<int64_t>(rng() % static_cast<uint32_t>(n)); };
  std::ostringstream o;
  o << "{\"traceEvents\":[\n{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"w" << host << "\"}}";
  const int64_t first = 1700000000000000 + 3777 * host + rnd(100);
  const int64_t span = 20000 + rnd(200000);
  for (int i = 0; i < 3000; ++i) {
    const int64_t ts = first + rnd(span);
    const int tid = 1 + static_cast<int>(rnd(4));
    switch (rnd(6)) {
      case 0:
        o << ",\n{\"ph\":\"B\",\"pid\":1,\"tid\":" << tid + 10 << ",\"ts\":" << ts << ",\"name\":\"b" << rnd(5) << "\"}"
          << ",\n{\"ph\":\"E\",\"pid\":1,\"tid\":" << tid + 10 << ",\"ts\":" << ts + 1 + rnd(50) << "}";
        break;
      case 1:
        o << ",\n{\"ph\":\"i\",\"pid\":1,\"tid\":" << tid << ",\"ts\":" << ts << ",\"name\":\"i\",\"s\":\"t\"}";
        break;
      case 2:
        o << ",\n{\"ph\":\"C\",\"pid\":1,\"ts\":" << ts << ",\"name\":\"mem\",\"args\":{\"v\":" << rnd(1000) << "}}";
        break;
      default:
        o << ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":" << tid << ",\"ts\":" << ts << "." << rnd(1000)
          << ",\"dur\":" << rnd(3) * rnd(5000) << "." << rnd(1000) << ",\"name\":\"op" << rnd(40) << "\"}";
    }
  }
  o << "\n]}\n";
  return o.str();
}

class RunIngestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / absl::StrCat("run_ingest_", ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "hosts");
    for (int h = 0; h < 4; ++h) std::ofstream(dir_ / "hosts" / absl::StrCat("host", h, ".json")) << HostTrace(h);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

std::vector<TileRow> Rows(const Table& t, uint32_t track, TileSection section, int level) {
  std::vector<TileRow> rows;
  ReadStats stats;
  EXPECT_TRUE(t.ReadTiles(track, section, level, INT64_MIN / 4, INT64_MAX / 4, &rows, &stats).ok());
  return rows;
}

TEST_F(RunIngestTest, EveryShardHoldsWhatTheSingleTableHoldsForItsHost) {
  absl::StatusOr<std::vector<InputFile>> inputs = ExpandInputs({(dir_ / "hosts").string()});
  ASSERT_TRUE(inputs.ok());
  // The single table, as `ingest FOLDER --single-table` makes it.
  BuildOptions bo;
  bo.output = (dir_ / "single.tracetable").string();
  absl::StatusOr<std::unique_ptr<TableBuilder>> b = TableBuilder::Create(bo);
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE(ReadInputs(*inputs, b->get(), nullptr).ok());
  ASSERT_TRUE((*b)->Finish().ok());
  absl::StatusOr<std::unique_ptr<Table>> single = Table::Open(bo.output);
  ASSERT_TRUE(single.ok()) << single.status();
  const proto::TableMeta& sm = (*single)->meta();

  const std::string run = (dir_ / "run.tracetable").string();
  absl::StatusOr<RunManifest> m = IngestRun(*inputs, run, 2, std::nullopt, ShardOptions{}, nullptr);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->shards.size(), 4u);
  EXPECT_EQ(m->origin_ns, sm.origin_ns());

  uint32_t track_base = 0;
  uint64_t events = 0, ids = 0;
  for (size_t i = 0; i < m->shards.size(); ++i) {
    const RunShardInfo& e = m->shards[i];
    EXPECT_EQ(e.host, absl::StrCat("host", i));
    absl::StatusOr<std::unique_ptr<Table>> shard = Table::Open((fs::path(run) / e.dir).string());
    ASSERT_TRUE(shard.ok()) << shard.status();
    const Table& t = **shard;
    EXPECT_EQ(t.meta().origin_ns(), sm.origin_ns());
    EXPECT_EQ(t.meta().min_ts(), sm.min_ts()) << e.host << ": not on the single table's grid";
    EXPECT_EQ(t.meta().num_levels(), sm.num_levels()) << e.host;
    EXPECT_EQ(t.meta().inputs(0).events(), sm.inputs(i).events()) << e.host;
    EXPECT_EQ(t.meta().inputs(0).host(), sm.inputs(i).host());
    events += t.meta().num_events();
    ids += t.meta().event_ids();
    // Tracks are made in read order, so the single table's tracks of input i
    // follow those of the inputs before it.
    for (const proto::Track& tr : t.resources().tracks()) {
      const proto::Track& st = (*single)->resources().tracks(track_base + tr.id());
      ASSERT_EQ(tr.name(), st.name()) << e.host << " track " << tr.id();
      ASSERT_EQ(tr.num_events(), st.num_events()) << e.host << " " << tr.name();
      for (int level = 0; level < static_cast<int>(sm.num_levels()); ++level) {
        for (TileSection section : {TileSection::kEvents, TileSection::kSummaries}) {
          const std::vector<TileRow> a = Rows(t, tr.id(), section, level);
          const std::vector<TileRow> b = Rows(**single, st.id(), section, level);
          ASSERT_EQ(a.size(), b.size()) << e.host << " " << tr.name() << " level " << level;
          for (size_t r = 0; r < a.size(); ++r) {
            EXPECT_EQ(a[r].ts, b[r].ts);
            EXPECT_EQ(a[r].dur, b[r].dur);
            EXPECT_EQ(a[r].count, b[r].count);
            EXPECT_EQ(a[r].covered, b[r].covered);
            EXPECT_EQ(a[r].lane, b[r].lane);
            EXPECT_EQ(a[r].value, b[r].value);
            EXPECT_EQ(t.String(a[r].name), (*single)->String(b[r].name));
          }
        }
      }
    }
    track_base += t.resources().tracks_size();
  }
  EXPECT_EQ(track_base, static_cast<uint32_t>((*single)->resources().tracks_size()));
  EXPECT_EQ(events, sm.num_events());
  EXPECT_EQ(ids, sm.event_ids());
}

TEST_F(RunIngestTest, ShardOfAppendsAndRegridMatchesTheFolderRun) {
  absl::StatusOr<std::vector<InputFile>> inputs = ExpandInputs({(dir_ / "hosts").string()});
  ASSERT_TRUE(inputs.ok());
  const std::string folder_run = (dir_ / "folder.tracetable").string();
  absl::StatusOr<RunManifest> want = IngestRun(*inputs, folder_run, 1, std::nullopt, ShardOptions{}, nullptr);
  ASSERT_TRUE(want.ok()) << want.status();
  // Hosts added in another order, by separate "machines", each with the
  // first host's origin: after --regrid every shard is on the folder run's grid.
  const std::string run = (dir_ / "appended.tracetable").string();
  for (int i : {2, 0, 3, 1}) {
    absl::StatusOr<ShardResult> r =
        IngestShardOf((*inputs)[i], run, "", want->origin_ns, ShardOptions{});
    ASSERT_TRUE(r.ok()) << r.status();
  }
  absl::StatusOr<int> n = RegridRun(run, 2, ShardOptions{}, nullptr);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_GT(*n, 0);
  absl::StatusOr<RunManifest> got = ReadRunManifest(run);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->shards.size(), want->shards.size());
  for (size_t i = 0; i < got->shards.size(); ++i) {
    const RunShardInfo& a = got->shards[i];
    const RunShardInfo& b = want->shards[i];
    EXPECT_EQ(a.host, b.host);
    EXPECT_EQ(a.min_ts, b.min_ts) << a.host;
    EXPECT_EQ(a.max_end, b.max_end) << a.host;
    EXPECT_EQ(a.num_levels, b.num_levels) << a.host;
    EXPECT_EQ(a.num_events, b.num_events) << a.host;
    EXPECT_EQ(a.event_ids, b.event_ids) << a.host;
    EXPECT_EQ(a.num_tracks, b.num_tracks) << a.host;
  }
  absl::StatusOr<int> again = RegridRun(run, 2, ShardOptions{}, nullptr);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, 0);
}

}  // namespace
}  // namespace tracetable::cli
