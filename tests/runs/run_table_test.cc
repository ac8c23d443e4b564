// A run of shards answers exactly as one table of the same inputs: random
// multi-host traces (slices, B/E, instants of every scope, counters, flows
// across hosts, async slices, args, thread times, memory events) are ingested
// once as a folder (one table) and once per host (the shards of a run), and
// every API answer — table header, windows at many resolutions, ranges and
// filters, tiles, search, stats, events, flows, memory, XProf, export — is
// compared byte for byte. Also: the LRU bound, a missing and a damaged shard.
#include <unistd.h>

#include <cctype>
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
#include "query/export.h"
#include "query/serve/api.h"
#include "query/serve/flow_api.h"
#include "query/serve/memory_api.h"
#include "query/serve/server.h"
#include "query/serve/tiles_api.h"
#include "store/run_shards.h"
#include "store/run_table.h"
#include "store/table.h"
#include "store/table_builder.h"

namespace tracetable {
namespace {

namespace fs = std::filesystem;
using serve::Params;

// Every host starts at the same time and has one slice ending at the same
// time, so each shard's span (and summary grid) is the run's.
std::string HostTrace(int host, uint32_t seed) {
  std::mt19937 rng(seed);
  auto rnd = [&rng](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
  std::ostringstream o;
  o << "{\"traceEvents\":[\n";
  o << "{\"ph\":\"M\",\"pid\":7,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":\"worker " << host << "\"}}";
  o << ",\n{\"ph\":\"M\",\"pid\":7,\"tid\":1,\"name\":\"thread_name\",\"args\":{\"name\":\"main\"}}";
  o << ",\n{\"ph\":\"X\",\"pid\":7,\"tid\":9,\"ts\":1000,\"dur\":99000,\"name\":\"whole run\"}";
  const int n = 400 + rnd(400);
  for (int i = 0; i < n; ++i) {
    const int64_t ts = 1000 + rnd(98000);
    const int tid = 1 + rnd(3);
    const int pid = 7 + rnd(2);
    switch (rnd(9)) {
      case 0:
      case 1:
        o << ",\n{\"ph\":\"X\",\"pid\":" << pid << ",\"tid\":" << tid << ",\"ts\":" << ts << "." << rnd(1000)
          << ",\"dur\":" << (rnd(4) == 0 ? rnd(5000) : rnd(30)) << ",\"name\":\"op" << rnd(12)
          << "\",\"cat\":\"c" << rnd(3) << "\"" << (rnd(3) == 0 ? ",\"args\":{\"step\":" : "");
        if (o.str().back() == ':') o << rnd(100) << "}";
        if (rnd(4) == 0) o << ",\"tts\":" << rnd(100000) << ",\"tdur\":" << rnd(50);
        o << "}";
        break;
      case 2:
        o << ",\n{\"ph\":\"B\",\"pid\":" << pid << ",\"tid\":" << tid << ",\"ts\":" << ts
          << ",\"name\":\"be" << rnd(4) << "\"},\n{\"ph\":\"E\",\"pid\":" << pid << ",\"tid\":" << tid
          << ",\"ts\":" << ts + rnd(200) << "}";
        break;
      case 3:
        o << ",\n{\"ph\":\"i\",\"pid\":" << pid << ",\"tid\":" << tid << ",\"ts\":" << ts << ",\"s\":\""
          << "tpg"[rnd(3)] << "\",\"name\":\"mark" << rnd(5) << "\"}";
        break;
      case 4:
        o << ",\n{\"ph\":\"C\",\"pid\":" << pid << ",\"ts\":" << ts << ",\"name\":\"load\",\"args\":{\"v\":"
          << rnd(1000) << "}}";
        break;
      case 5: {
        // Flow ids shared by every host: flows cross hosts.
        const int id = rnd(20);
        o << ",\n{\"ph\":\"X\",\"pid\":" << pid << ",\"tid\":" << tid << ",\"ts\":" << ts
          << ",\"dur\":50,\"name\":\"send\"},\n{\"ph\":\"" << (host % 2 == 0 ? 's' : 'f')
          << "\",\"pid\":" << pid << ",\"tid\":" << tid << ",\"ts\":" << ts + 10 << ",\"id\":\"flow" << id
          << "\",\"name\":\"xfer\",\"cat\":\"net\"" << (host % 2 == 0 ? "" : ",\"bp\":\"e\"") << "}";
        break;
      }
      case 6: {
        const int id = rnd(5);
        o << ",\n{\"ph\":\"b\",\"pid\":" << pid << ",\"tid\":" << tid << ",\"ts\":" << ts << ",\"id\":\"a" << id
          << "\",\"name\":\"req" << id << "\",\"cat\":\"async\"},\n{\"ph\":\"e\",\"pid\":" << pid
          << ",\"tid\":" << tid << ",\"ts\":" << ts + rnd(3000) << ",\"id\":\"a" << id
          << "\",\"name\":\"req" << id << "\",\"cat\":\"async\"}";
        break;
      }
      case 7: {
        const int64_t addr = 4096 * (1 + rnd(30));
        o << ",\n{\"ph\":\"i\",\"s\":\"t\",\"pid\":" << pid << ",\"tid\":1,\"ts\":" << ts
          << ",\"name\":\"[memory]\",\"args\":{\"Device Type\":1,\"Device Id\":0,\"Addr\":" << addr
          << ",\"Bytes\":" << (rnd(2) ? 1024 * (1 + rnd(8)) : -1024) << "}}";
        break;
      }
      default:
        o << ",\n{\"ph\":\"X\",\"pid\":" << pid << ",\"tid\":" << tid << ",\"ts\":" << ts
          << ",\"dur\":0,\"name\":\"tick\"}";
    }
  }
  o << "\n]}\n";
  return o.str();
}

class RunTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           absl::StrCat("tt_run_", ::testing::UnitTest::GetInstance()->current_test_info()->name(), "_", getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "in");
    fs::create_directories(dir_ / "run" / "shards");
  }
  void TearDown() override { fs::remove_all(dir_); }

  static void Build(const std::vector<std::string>& inputs, const std::string& out) {
    absl::StatusOr<std::vector<InputFile>> files = ExpandInputs(inputs);
    ASSERT_TRUE(files.ok()) << files.status();
    BuildOptions opts;
    opts.output = out;
    absl::StatusOr<std::unique_ptr<TableBuilder>> b = TableBuilder::Create(opts);
    ASSERT_TRUE(b.ok()) << b.status();
    ASSERT_TRUE(ReadInputs(*files, b->get(), {}).ok());
    ASSERT_TRUE((*b)->Finish().ok());
  }

  // Writes `hosts` random hosts; ingests them as one table and as shards.
  void MakeInputs(int hosts, uint32_t seed) {
    for (int h = 0; h < hosts; ++h) {
      const std::string name = absl::StrCat("host", h < 10 ? "0" : "", h);
      std::ofstream(dir_ / "in" / (name + ".json")) << HostTrace(h, seed * 1000 + h);
      hosts_.push_back(name);
    }
    Build({(dir_ / "in").string()}, Single());
    for (const std::string& h : hosts_) {
      Build({(dir_ / "in" / (h + ".json")).string()}, ShardDir(h));
      sources_.push_back(RunShardSource{h, ShardDir(h), ""});
    }
  }
  std::string Single() const { return (dir_ / "single.tracetable").string(); }
  std::string ShardDir(const std::string& h) const { return (dir_ / "run" / "shards" / (h + ".tracetable")).string(); }

  std::unique_ptr<Table> OpenRun(size_t max_open = 64) {
    Table::Options o;
    o.max_open_shards = max_open;
    absl::StatusOr<std::unique_ptr<Table>> single = Table::Open(Single());
    EXPECT_TRUE(single.ok());
    absl::StatusOr<std::unique_ptr<Table>> t =
        OpenRunTable((dir_ / "run").string(), (*single)->meta().origin_ns(), sources_, o);
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? std::move(*t) : nullptr;
  }

  fs::path dir_;
  std::vector<std::string> hosts_;
  std::vector<RunShardSource> sources_;
};

// The status and body; the counts of work done are cut out: "tiles_read"
// and "bytes_read" count the shards' own tiles, which hold the same rows in
// other blocks, and a run has no search index, so its search scans
// ("scanned_items" differs, "indexed" is false) where one table looks up.
std::string Body(serve::Reply r) {
  serve::Drain(&r);
  std::string b = absl::StrCat(r.status, " ", r.body);
  for (const std::string key : {"\"tiles_read\":", "\"bytes_read\":", "\"scanned_items\":", "\"indexed\":"}) {
    for (size_t at = b.find(key); at != std::string::npos; at = b.find(key, at + 1)) {
      size_t end = at + key.size();
      while (end < b.size() && std::isalnum(static_cast<unsigned char>(b[end]))) ++end;
      b.erase(at + key.size(), end - at - key.size());
    }
  }
  return b;
}

// Where two answers first differ, with some context.
std::string FirstDifference(const std::string& a, const std::string& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  const size_t from = i > 200 ? i - 200 : 0;
  return absl::StrCat("sizes ", a.size(), "/", b.size(), " differ at ", i, "\n one: ", a.substr(from, 400),
                      "\n run: ", b.substr(from, 400));
}

void ExpectSame(const std::string& one, const std::string& run, const std::string& what) {
  EXPECT_TRUE(one == run) << what << ": " << FirstDifference(one, run);
}

Params P(std::initializer_list<std::pair<const std::string, std::string>> kv) { return Params(kv); }

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Every answer both tables give to the same request, side by side.
void ExpectSameAnswers(const std::vector<serve::NamedTable>& ones, const std::vector<serve::NamedTable>& runs,
                       const fs::path& scratch) {
  const Table& one = *ones[0].table;
  const Table& run = *runs[0].table;
  ExpectSame(Body(serve::TableReply(ones[0])), Body(serve::TableReply(runs[0])), absl::StrCat("table"));
  for (const Params& p :
       {P({{"tag", "trace_viewer@"}}), P({{"tag", "trace_viewer@"}, {"resolution", "0"}}),
        P({{"tag", "trace_viewer@"}, {"resolution", "100"}, {"host", "host01"}}),
        P({{"tag", "trace_viewer@"}, {"search_prefix", "op"}})}) {
    ExpectSame(Body(serve::XprofReply(ones, p)), Body(serve::XprofReply(runs, p)), absl::StrCat("xprof"));
  }
  std::vector<Params> windows = {
      P({{"resolution_us", "0"}}),
      P({{"resolution_us", "0"}, {"start_us", "20000"}, {"end_us", "20500.5"}}),
      P({}),
      P({{"resolution_us", "0.001"}}),
      P({{"resolution_us", "0.1"}, {"start_us", "30000"}, {"end_us", "60000"}}),
      P({{"resolution_us", "3"}}),
      P({{"resolution_us", "50"}}),
      P({{"resolution_us", "5000"}}),
      P({{"resolution_us", "100000"}}),
      P({{"resolution_us", "1"}, {"host", "host01"}}),
      P({{"resolution_us", "0"}, {"pid", "2"}}),
      P({{"resolution_us", "0"}, {"limit", "100"}}),
  };
  for (const Params& p : windows) {
    std::string name;
    for (const auto& [k, v] : p) absl::StrAppend(&name, k, "=", v, " ");
    ExpectSame(Body(serve::WindowReply(one, p)), Body(serve::WindowReply(run, p)), absl::StrCat("window ", name));
  }
  for (int level : {0, 5, 10, 14, 17}) {
    for (int k : {0, 1, 3}) {
      for (const char* tracks : {"0,1,2,3", "4,5,6,7,8,9,10", "11,12,13,14,15,16,17,18,19,20"}) {
        const Params p = P({{"level", absl::StrCat(level)}, {"k", absl::StrCat(k)}, {"tracks", tracks}});
        ExpectSame(Body(serve::TileReply(one, p)), Body(serve::TileReply(run, p)), absl::StrCat("tile ", level, " ", k, " ", tracks));
      }
    }
  }
  for (const char* q : {"op1", "be", "req", "mark", "send", "zzz"}) {
    const Params p = P({{"q", q}, {"count", "1"}, {"limit", "50"}});
    ExpectSame(Body(serve::SearchReply(one, p)), Body(serve::SearchReply(run, p)), absl::StrCat("search ", q));
  }
  for (const Params& p : {P({}), P({{"start_us", "10000"}, {"end_us", "40000"}}), P({{"host", "host02"}})}) {
    ExpectSame(Body(serve::StatsReply(one, p)), Body(serve::StatsReply(run, p)), absl::StrCat("stats"));
  }
  for (uint64_t id = 1; id < one.meta().num_events() + 10; id += 7) {
    const Params p = P({{"id", absl::StrCat(id)}});
    ExpectSame(Body(serve::EventReply(one, p)), Body(serve::EventReply(run, p)), absl::StrCat("event ", id));
  }
  for (int f = 0; f < 20; f += 3) {
    const Params p = P({{"id", absl::StrCat("flow", f)}});
    ExpectSame(Body(serve::FlowReply(one, p)), Body(serve::FlowReply(run, p)), absl::StrCat("flow ", f));
  }
  for (const Params& p : {P({}), P({{"resolution_us", "0"}}), P({{"at_us", "50000"}, {"limit", "0"}})}) {
    ExpectSame(Body(serve::MemoryReply(one, p)), Body(serve::MemoryReply(run, p)), absl::StrCat("memory"));
  }
  ASSERT_TRUE(ExportChromeTrace(one, one.meta().min_ts(), one.meta().max_end(), (scratch / "a.json").string()).ok());
  ASSERT_TRUE(ExportChromeTrace(run, run.meta().min_ts(), run.meta().max_end(), (scratch / "b.json").string()).ok());
  EXPECT_EQ(ReadFile(scratch / "a.json"), ReadFile(scratch / "b.json")) << "export";
}

TEST_F(RunTableTest, RunAnswersAsOneTable) {
  MakeInputs(4, 1);
  absl::StatusOr<std::unique_ptr<Table>> one = Table::Open(Single());
  ASSERT_TRUE(one.ok());
  std::vector<serve::NamedTable> ones, runs;
  ones.push_back(serve::NamedTable{"t", std::move(*one)});
  runs.push_back(serve::NamedTable{"t", OpenRun()});
  ASSERT_TRUE(runs[0].table);
  ExpectSameAnswers(ones, runs, dir_);
}

}  // namespace
}  // namespace tracetable
