// Every real trace in shared/traces (other projects' test data) must ingest;
// on each, windows and tiles obey the contract against the brute-force
// reference, the table passes the stored-count checks, export -> re-ingest
// gives the same events, and a tiny memory budget gives the same table as the default.
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "ingest/input.h"
#include "format/time.h"
#include "query/export.h"
#include "query/window.h"
#include "store/table.h"
#include "store/table_builder.h"
#include "tests/query/tile_reference.h"
#include "tests/query/window_reference.h"
#include "tests/shared_traces.h"

namespace tracetable {
namespace {
namespace fs = std::filesystem;
using namespace tracetable::testing;


class Scratch {
 public:
  Scratch() : dir_(fs::temp_directory_path() / ("tt_real_" + std::to_string(getpid()))) {
    fs::create_directories(dir_);
  }
  ~Scratch() { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

 private:
  fs::path dir_;
};

absl::Status Ingest(const std::vector<std::string>& inputs, const std::string& out,
                    uint64_t budget = uint64_t{1} << 30) {
  absl::StatusOr<std::vector<InputFile>> files = ExpandInputs(inputs);
  if (!files.ok()) return files.status();
  BuildOptions opts;
  opts.output = out;
  opts.memory_budget = budget;
  opts.overwrite = true;
  absl::StatusOr<std::unique_ptr<TableBuilder>> b = TableBuilder::Create(opts);
  if (!b.ok()) return b.status();
  if (absl::Status s = ReadInputs(*files, b->get(), {}); !s.ok()) return s;
  return (*b)->Finish();
}

WindowResult Everything(const Table& t) {
  WindowRequest req;
  req.start = t.meta().min_ts();
  req.end = t.meta().max_end();
  absl::StatusOr<WindowResult> r = QueryWindow(t, req);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : WindowResult();
}

// The stored events as the reference sees them.
Trace StoredEvents(const Table& t) {
  Trace tr;
  tr.counter_track.resize(t.resources().tracks_size());
  for (const proto::Track& track : t.resources().tracks()) {
    tr.counter_track[track.id()] = track.kind() == proto::Track::COUNTER;
  }
  for (const WindowItem& i : Everything(t).items) {
    tr.events.push_back({i.track, i.row.kind, i.row.ts, i.row.dur, i.row.name, i.row.id,
                         i.row.lane, i.row.value});
  }
  return tr;
}

// What survives export -> re-ingest: who, what and when, by name.
using Portable = std::tuple<std::string /*pid*/, std::string /*tid*/, int /*kind*/,
                            std::string /*name*/, std::string /*cat*/, std::string /*ts_us*/,
                            int64_t /*dur*/, double /*value*/>;

std::multiset<Portable> PortableEvents(const Table& t) {
  std::multiset<Portable> out;
  const __int128 origin = static_cast<__int128>(t.meta().origin_ns()) * 1000;
  for (const WindowItem& i : Everything(t).items) {
    const proto::Track& tr = t.resources().tracks(i.track);
    const proto::Process& p = t.resources().processes(tr.process());
    const bool counter = tr.kind() == proto::Track::COUNTER;
    // Instant and async tracks are known by their names; their tids are made up.
    const bool named = tr.kind() == proto::Track::INSTANTS || tr.kind() == proto::Track::ASYNC;
    out.insert({p.pid(), counter ? tr.name() + "/" + tr.series() : named ? tr.name() : std::to_string(tr.out_tid()),
                static_cast<int>(i.row.kind), std::string(t.String(i.row.name)),
                std::string(t.String(i.row.cat)),
                FormatMicros(origin + i.row.ts),
                i.row.dur, i.row.value});
  }
  return out;
}

class RealTrace : public ::testing::TestWithParam<std::string> {};

TEST_P(RealTrace, IngestsAndAnswersWindowsExactly) {
  Scratch scratch;
  const std::string table_path = scratch.Path("t.tracetable");
  ASSERT_TRUE(Ingest({GetParam()}, table_path).ok()) << GetParam();
  absl::StatusOr<std::unique_ptr<Table>> t = Table::Open(table_path);
  ASSERT_TRUE(t.ok()) << t.status();
  const Table& table = **t;
  EXPECT_GT(table.meta().num_events(), 0u);
  uint64_t per_track = 0;
  for (const proto::Track& tr : table.resources().tracks()) per_track += tr.num_events();
  EXPECT_EQ(per_track, table.meta().num_events());
  const Trace tr = StoredEvents(table);
  ASSERT_EQ(tr.events.size(), table.meta().num_events());
  CheckWindowsAgainst(table, tr, 7, 25);
  CheckTilesAgainst(table, tr, 7, 25);
}

TEST_P(RealTrace, ExportThenReingestGivesTheSameEvents) {
  Scratch scratch;
  const std::string a = scratch.Path("a.tracetable"), b = scratch.Path("b.tracetable");
  const std::string json = scratch.Path("export.json.gz");
  ASSERT_TRUE(Ingest({GetParam()}, a).ok());
  auto ta = Table::Open(a);
  ASSERT_TRUE(ta.ok());
  absl::StatusOr<uint64_t> n =
      ExportChromeTrace(**ta, (*ta)->meta().min_ts(), (*ta)->meta().max_end(), json);
  ASSERT_TRUE(n.ok()) << n.status();
  uint64_t derived = 0;  // memory profile counters: derived again on ingest
  for (const proto::Track& tr : (*ta)->resources().tracks()) derived += tr.derived() ? tr.num_events() : 0;
  EXPECT_EQ(*n, (*ta)->meta().num_events() - derived);
  ASSERT_TRUE(Ingest({json}, b).ok());
  auto tb = Table::Open(b);
  ASSERT_TRUE(tb.ok());
  const auto ea = PortableEvents(**ta), eb = PortableEvents(**tb);
  EXPECT_EQ(ea.size(), eb.size());
  int shown = 0;
  auto show = [](const Portable& e) {
    return std::get<0>(e) + "/" + std::get<1>(e) + " kind " + std::to_string(std::get<2>(e)) +
           " " + std::get<3>(e) + " [" + std::get<4>(e) + "] ts " + std::get<5>(e) + " dur " +
           std::to_string(std::get<6>(e)) + " v " + std::to_string(std::get<7>(e));
  };
  for (const Portable& e : ea) {
    if (!eb.count(e) && shown++ < 5) ADD_FAILURE() << "lost: " << show(e);
  }
  for (const Portable& e : eb) {
    if (!ea.count(e) && shown++ < 10) ADD_FAILURE() << "new:  " << show(e);
  }
}

INSTANTIATE_TEST_SUITE_P(Shared, RealTrace, ::testing::ValuesIn(SharedTraces()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = fs::path(info.param).filename().string();
                           for (char& c : name) {
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(RealTraces, SharedFolderIsThere) { EXPECT_GE(SharedTraces().size(), 29u); }

TEST(RealTraces, TinyMemoryBudgetGivesTheSameTable) {
  Scratch scratch;
  const std::string trace = std::string(TRACETABLE_SHARED_TRACES) + "/kineto/df_index_resolver.json.gz";
  ASSERT_TRUE(Ingest({trace}, scratch.Path("big.tracetable")).ok());
  // 256 KiB of records for 216k events: dozens of spilled runs.
  ASSERT_TRUE(Ingest({trace}, scratch.Path("small.tracetable"), 256 << 10).ok());
  auto big = Table::Open(scratch.Path("big.tracetable"));
  auto small = Table::Open(scratch.Path("small.tracetable"));
  ASSERT_TRUE(big.ok() && small.ok());
  const Trace a = StoredEvents(**big), b = StoredEvents(**small);
  ASSERT_EQ(a.events.size(), b.events.size());
  for (size_t i = 0; i < a.events.size(); ++i) {
    ASSERT_EQ(EventKey(a.events[i]), EventKey(b.events[i])) << i;
  }
}

TEST(RealTraces, SeveralInputsBecomeHostsOfOneTable) {
  Scratch scratch;
  const std::string k = std::string(TRACETABLE_SHARED_TRACES) + "/kineto/";
  const std::string x = std::string(TRACETABLE_SHARED_TRACES) + "/xspace/gpu_multi_worker_host179.xplane.pb";
  ASSERT_TRUE(Ingest({k + "sampled_rank-0.json.gz", k + "sampled_rank-1.json.gz", x},
                     scratch.Path("multi.tracetable")).ok());
  auto t = Table::Open(scratch.Path("multi.tracetable"));
  ASSERT_TRUE(t.ok());
  std::set<std::string> hosts;
  for (const proto::Process& p : (*t)->resources().processes()) {
    hosts.insert(p.host());
    EXPECT_EQ(p.name().rfind(p.host() + " ", 0), 0u) << p.name();
  }
  EXPECT_TRUE(hosts.count("sampled_rank-0"));
  EXPECT_TRUE(hosts.count("sampled_rank-1"));
  EXPECT_EQ(hosts.size(), 3u);
  // Kineto's process-relative clock and XSpace's epoch clock cannot share a
  // table as given: the XSpace input is shifted, and the table says so.
  const proto::TableMeta& m = (*t)->meta();
  ASSERT_EQ(m.inputs_size(), 3);
  EXPECT_EQ(m.inputs(0).clock_shift_ns(), 0);
  EXPECT_NE(m.inputs(2).clock_shift_ns(), 0);
  EXPECT_GT(m.inputs(2).events(), 20000u);
  const Trace tr = StoredEvents(**t);
  CheckWindowsAgainst(**t, tr, 3, 20);
}

}  // namespace
}  // namespace tracetable
