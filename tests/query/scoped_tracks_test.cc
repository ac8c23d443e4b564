// Scoped instants and async nests through a real table, from Chrome JSON:
// "s":"g" instants on one Global instants track per input (in a global
// process), "s":"p" on their process's instant track, async b/e of one id
// nested by depth on their outermost slice's track, unrelated ids beside
// them; windows, search, range statistics and export answer for them, and
// export -> ingest gives the scoped tracks and the nests back.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "tests/query/ingested_table_test.h"
#include "ingest/input.h"
#include "query/export.h"
#include "query/range_stats.h"
#include "query/search.h"
#include "query/trace_json.h"
#include "query/window.h"
#include "store/table.h"
#include "store/table_builder.h"

namespace tracetable {
namespace {
namespace fs = std::filesystem;

constexpr char kTrace[] = R"({"traceEvents":[
{"ph":"M","name":"process_name","pid":1,"args":{"name":"Renderer"}},
{"ph":"X","name":"work","pid":1,"tid":2,"ts":0,"dur":100},
{"ph":"i","name":"navigationStart","s":"g","pid":1,"tid":2,"ts":10},
{"ph":"i","name":"firstPaint","s":"g","ts":12},
{"ph":"i","name":"gc","s":"p","pid":1,"tid":2,"ts":20},
{"ph":"i","name":"tick","s":"t","pid":1,"tid":2,"ts":30},
{"ph":"i","name":"other","s":"p","pid":3,"tid":3,"ts":31},
{"ph":"b","name":"Request","cat":"net","id":"0x1","pid":1,"tid":2,"ts":0},
{"ph":"b","name":"Connect","cat":"net","id":"0x1","pid":1,"tid":2,"ts":10},
{"ph":"b","name":"Handshake","cat":"net","id":"0x1","pid":1,"tid":2,"ts":15},
{"ph":"n","name":"retry","cat":"net","id":"0x1","pid":1,"tid":2,"ts":16},
{"ph":"e","name":"Handshake","cat":"net","id":"0x1","pid":1,"tid":2,"ts":30},
{"ph":"e","name":"Connect","cat":"net","id":"0x1","pid":1,"tid":2,"ts":40},
{"ph":"b","name":"Read","cat":"net","id":"0x1","pid":1,"tid":2,"ts":50},
{"ph":"e","name":"Read","cat":"net","id":"0x1","pid":1,"tid":2,"ts":80},
{"ph":"e","name":"Request","cat":"net","id":"0x1","pid":1,"tid":2,"ts":90},
{"ph":"b","name":"Request","cat":"net","id":"0x2","pid":1,"tid":2,"ts":5},
{"ph":"b","name":"Connect","cat":"net","id":"0x2","pid":1,"tid":2,"ts":6},
{"ph":"e","name":"Connect","cat":"net","id":"0x2","pid":1,"tid":2,"ts":60},
{"ph":"e","name":"Request","cat":"net","id":"0x2","pid":1,"tid":2,"ts":70},
{"ph":"b","name":"Request","cat":"net","id":"0x1","pid":1,"tid":2,"ts":95},
{"ph":"e","name":"Request","cat":"net","id":"0x1","pid":1,"tid":2,"ts":99}
]})";

using namespace tracetable::testing;

class ScopedTracksTest : public IngestedTableTest {};

// "<process name or pid>/<kind>/<track name>" -> event names, in window order.
std::map<std::string, std::vector<std::string>> EventsByTrack(const Table& t) {
  std::map<std::string, std::vector<std::string>> out;
  for (const proto::Track& tr : t.resources().tracks()) {
    const proto::Process& p = t.resources().processes(tr.process());
    out[(p.global() ? std::string("<global>") : p.name().empty() ? p.pid() : p.name()) + "/" +
        TrackKindName(tr) + "/" + tr.name()];
  }
  for (const WindowItem& it : Everything(t)) {
    const proto::Track& tr = t.resources().tracks(it.track);
    const proto::Process& p = t.resources().processes(tr.process());
    out[(p.global() ? std::string("<global>") : p.name().empty() ? p.pid() : p.name()) + "/" +
        TrackKindName(tr) + "/" + tr.name()]
        .emplace_back(t.String(it.row.name));
  }
  return out;
}

TEST_F(ScopedTracksTest, InstantsGoToTheirScopesTrack) {
  std::unique_ptr<Table> t = IngestText(kTrace, "a");
  ASSERT_TRUE(t);
  std::map<std::string, std::vector<std::string>> by = EventsByTrack(*t);
  EXPECT_EQ(by["<global>/instants/Global instants"], (std::vector<std::string>{"navigationStart", "firstPaint"}));
  EXPECT_EQ(by["Renderer/instants/Process instants"], (std::vector<std::string>{"gc"}));
  EXPECT_EQ(by["3/instants/Process instants"], (std::vector<std::string>{"other"}));
  EXPECT_EQ(by["Renderer/thread/"], (std::vector<std::string>{"work", "tick"}));
  // No thread was made for the scoped instants (pid 3 has none).
  for (const auto& [k, v] : by) EXPECT_NE(k.rfind("3/thread", 0), 0u) << k;
  // One global process, listed above every process of its input.
  int globals = 0;
  for (const proto::Process& p : t->resources().processes()) {
    if (!p.global()) continue;
    ++globals;
    EXPECT_EQ(p.sort_index(), INT32_MIN);
    EXPECT_TRUE(p.has_sort_index());
  }
  EXPECT_EQ(globals, 1);
  // Search finds them like any event.
  SearchRequest req;
  req.names = NamesContaining(*t, "paint", false);
  for (int i = 0; i < t->resources().tracks_size(); ++i) req.tracks.push_back(i);
  req.start = t->meta().min_ts();
  req.end = t->meta().max_end();
  absl::StatusOr<SearchResult> found = Search(*t, req);
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_EQ(found->matches.size(), 1u);
  EXPECT_EQ(t->resources().tracks(found->matches[0].track).kind(), proto::Track::INSTANTS);
  // Range statistics count them on their track.
  const uint32_t global = found->matches[0].track;
  absl::StatusOr<RangeStats> stats = ComputeRangeStats(*t, {global}, t->meta().min_ts(), t->meta().max_end(), 1000);
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_EQ(stats->tracks.size(), 1u);
  EXPECT_EQ(stats->tracks[0].first, global);
  EXPECT_EQ(stats->tracks[0].second.count, 2u);
}

TEST_F(ScopedTracksTest, AsyncSlicesNestByIdOnTheirRootsTrack) {
  std::unique_ptr<Table> t = IngestText(kTrace, "a");
  ASSERT_TRUE(t);
  int async_tracks = 0;
  uint32_t request = 0;
  for (const proto::Track& tr : t->resources().tracks()) {
    if (tr.kind() != proto::Track::ASYNC) continue;
    ++async_tracks;
    request = tr.id();
    EXPECT_EQ(tr.name(), "Request");
  }
  // Connect, Handshake and Read only ever begin inside a Request of their
  // id: no track of their own.
  EXPECT_EQ(async_tracks, 1);
  std::vector<std::tuple<std::string, int64_t, uint32_t>> got;
  for (const WindowItem& it : Everything(*t)) {
    if (it.track != request) continue;
    got.emplace_back(std::string(t->String(it.row.name)), it.row.ts / 1000000, it.row.lane);
  }
  // Id 0x1: Request > Connect > Handshake (depth 0, 1, 2), then Read at
  // depth 1; its "retry" instant on the same track. Id 0x2 overlaps it, so
  // its nest takes the lanes under 0x1's whole block (3, 4); 0x1 used again
  // after both ended starts at lane 0.
  const std::vector<std::tuple<std::string, int64_t, uint32_t>> want = {
      {"Request", 0, 0}, {"Request", 5, 3}, {"Connect", 6, 4}, {"Connect", 10, 1}, {"Handshake", 15, 2},
      {"retry", 16, 0},  {"Read", 50, 1},   {"Request", 95, 0}};
  EXPECT_EQ(got, want);
  EXPECT_EQ(t->resources().tracks(request).max_depth(), 4u);
}

TEST_F(ScopedTracksTest, AsyncIdsPairWithinTheirInputAndEachInputHasItsGlobalTrack) {
  std::ofstream(Path("h1.json")) << kTrace;
  std::ofstream(Path("h2.json")) << kTrace;
  absl::StatusOr<std::vector<InputFile>> files = ExpandInputs({Path("h1.json"), Path("h2.json")});
  ASSERT_TRUE(files.ok()) << files.status();
  BuildOptions opts;
  opts.output = Path("two");
  absl::StatusOr<std::unique_ptr<TableBuilder>> b = TableBuilder::Create(opts);
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_TRUE(ReadInputs(*files, b->get(), {}).ok());
  ASSERT_TRUE((*b)->Finish().ok());
  absl::StatusOr<std::unique_ptr<Table>> t = Table::Open(Path("two"));
  ASSERT_TRUE(t.ok()) << t.status();
  std::map<std::string, std::vector<std::tuple<std::string, int64_t, uint32_t>>> nests;
  std::map<std::string, int> globals;
  for (const WindowItem& it : Everything(**t)) {
    const proto::Track& tr = (*t)->resources().tracks(it.track);
    const proto::Process& p = (*t)->resources().processes(tr.process());
    if (tr.kind() == proto::Track::ASYNC) {
      nests[p.host()].emplace_back(std::string((*t)->String(it.row.name)), it.row.ts / 1000000, it.row.lane);
    }
    if (p.global()) ++globals[p.host()];
  }
  // Each host's nests exactly as in one input alone: the same ids in the
  // other input are other requests.
  ASSERT_EQ(nests.size(), 2u);
  EXPECT_EQ(nests["h1"], nests["h2"]);
  EXPECT_EQ(nests["h1"].size(), 8u);
  EXPECT_EQ((std::map<std::string, int>{{"h1", 2}, {"h2", 2}}), globals);
}

TEST_F(ScopedTracksTest, ExportWritesTheScopeAndReingestGivesTheTracksBack) {
  std::unique_ptr<Table> t = IngestText(kTrace, "a");
  ASSERT_TRUE(t);
  absl::StatusOr<uint64_t> n = ExportChromeTrace(*t, t->meta().min_ts(), t->meta().max_end(), Path("x.json"));
  ASSERT_TRUE(n.ok()) << n.status();
  std::ifstream in(Path("x.json"));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find(R"("name":"navigationStart","cat":"","s":"g")"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("name":"gc","cat":"","s":"p")"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("name":"tick","cat":"","s":"t")"), std::string::npos) << text;
  // The instant tracks and the global process are implied by the scope:
  // naming them would make threads and a process of them.
  EXPECT_EQ(text.find("Global instants"), std::string::npos) << text;
  EXPECT_EQ(text.find("Process instants"), std::string::npos) << text;
  std::unique_ptr<Table> back = Ingest(Path("x.json"), "b");
  ASSERT_TRUE(back);
  std::map<std::string, std::vector<std::string>> a = EventsByTrack(*t), b = EventsByTrack(*back);
  for (const char* k : {"<global>/instants/Global instants", "Renderer/instants/Process instants",
                        "3/instants/Process instants"}) {
    EXPECT_EQ(a[k], b[k]) << k;
  }
  EXPECT_EQ(back->resources().processes_size(), t->resources().processes_size());
  // Async slices go back as b/e pairs with their ids: they nest again, on
  // the same one track, and no thread is named after it.
  EXPECT_NE(text.find(R"("ph":"b")"), std::string::npos) << text;
  EXPECT_EQ(text.find("async: Request"), std::string::npos) << text;
  auto nests = [](const Table& x) {
    std::vector<std::tuple<std::string, int64_t, int64_t, uint32_t>> out;
    for (const WindowItem& it : Everything(x)) {
      if (x.resources().tracks(it.track).kind() != proto::Track::ASYNC) continue;
      out.emplace_back(std::string(x.String(it.row.name)), it.row.ts, it.row.dur, it.row.lane);
    }
    return out;
  };
  EXPECT_EQ(nests(*t), nests(*back));
  EXPECT_EQ(nests(*t).size(), 8u);
  EXPECT_EQ(back->resources().tracks_size(), t->resources().tracks_size());
}

}  // namespace
}  // namespace tracetable
