// tracetable serve: every endpoint and error path over real HTTP (an
// in-process server on an ephemeral loopback port), answers compared with
// direct QueryWindow / Table calls, concurrency, and a recorded XProf
// request sequence (xprof_requests.txt).
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "cli/common.h"
#include "format/absl_compat.h"
#include "format/time.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "query/flow_ends.h"
#include "query/serve/api.h"
#include "query/serve/index_page.h"
#include "query/serve/server.h"
#include "query/tile_pack.h"
#include "query/tiles.h"
#include "query/trace_json.h"
#include "query/window.h"
#include "simdjson.h"
#include "zlib.h"
#include "tests/serve/gunzip.h"

namespace tracetable::serve {
namespace {

namespace fs = std::filesystem;

constexpr int kParents = 400;  // per host

std::string Canon(const std::string& body);

// One host's trace: nested Parent/ChildA/ChildB slices (with args) on tid 1,
// short "fusion.N" ops on tid 2, instants, a counter and flows.
std::string HostTrace(int host) {
  std::ostringstream o;
  o << "{\"traceEvents\":[\n";
  o << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"tid\":0,\"args\":{\"name\":\"worker" << host << "\"}},\n";
  o << "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":1,\"args\":{\"name\":\"main\"}},\n";
  o << "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":2,\"args\":{\"name\":\"ops\"}},\n";
  const int64_t base = 1000;  // us
  for (int i = 0; i < kParents; ++i) {
    const int64_t ts = base + i * 100;
    o << "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":" << ts << ",\"dur\":80,\"name\":\"Parent\",\"cat\":\"py\",\"args\":{\"i\":" << i << "}},\n";
    // Thread time on every other ChildA (no args) and every third ChildB.
    o << "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":" << ts + 10 << ",\"dur\":30,\"name\":\"ChildA\",\"cat\":\"py\""
      << (i % 2 == 0 ? absl::StrCat(",\"tts\":", 2 * (ts + 10), ",\"tdur\":25") : "") << "},\n";
    o << "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":" << ts + 45 << ",\"dur\":20,\"name\":\"ChildB\",\"cat\":\"py\","
      << (i % 3 == 0 ? "\"tts\":7.5," : "") << "\"args\":{\"host\":" << host << "}},\n";
    if (i % 5 == 0) {
      o << "{\"ph\":\"i\",\"pid\":1,\"tid\":1,\"ts\":" << ts + 90 << ",\"name\":\"Mark\",\"s\":\"t\"},\n";
      o << "{\"ph\":\"s\",\"pid\":1,\"tid\":1,\"ts\":" << ts + 11 << ",\"name\":\"flow\",\"cat\":\"f\",\"id\":\"" << i << "\"},\n";
      o << "{\"ph\":\"f\",\"pid\":1,\"tid\":2,\"ts\":" << ts + 21 << ",\"name\":\"flow\",\"cat\":\"f\",\"id\":\"" << i << "\",\"bp\":\"e\"},\n";
    }
    for (int k = 0; k < 12; ++k) {
      const int64_t t2 = ts + k * 8;
      o << "{\"ph\":\"X\",\"pid\":1,\"tid\":2,\"ts\":" << t2 << "." << (k * 37 % 1000)
        << ",\"dur\":" << 1 + (i + k) % 5 << ".25,\"name\":\"fusion." << (i * 7 + k) % 61 << "\"},\n";
    }
    o << "{\"ph\":\"C\",\"pid\":1,\"ts\":" << ts << ",\"name\":\"mem\",\"args\":{\"bytes\":" << (i * 37) % 1000 << "}},\n";
  }
  o << "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":" << base + kParents * 100 << ",\"dur\":1,\"name\":\"End\"}\n],\"metadata\":{\"host\":" << host << ",\"clock\":\"boot\"}}\n";
  return o.str();
}

int Ingest(const std::vector<std::string>& inputs, const std::string& out) {
  std::vector<std::string> args = {"ingest"};
  args.insert(args.end(), inputs.begin(), inputs.end());
  args.insert(args.end(), {"-o", out, "--force", "-q"});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return cli::IngestMain(static_cast<int>(argv.size()), argv.data());
}

class ServeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / absl::StrCat("tt_serve_test_", getpid()));
    fs::remove_all(*dir_);
    fs::create_directories(*dir_ / "tables");
    for (int h = 0; h < 2; ++h) {
      std::ofstream(*dir_ / absl::StrCat("host", h, ".json")) << HostTrace(h);
    }
    ASSERT_EQ(Ingest({(*dir_ / "host0.json").string(), (*dir_ / "host1.json").string()},
                     (*dir_ / "tables" / "multi.tracetable").string()), 0);
    ASSERT_EQ(Ingest({(*dir_ / "host0.json").string()}, (*dir_ / "tables" / "single.tracetable").string()), 0);
    ServeOptions so;
    so.cache_bytes = 16 << 20;
    so.threads = 24;
    absl::StatusOr<std::vector<NamedTable>> tables = OpenTables({(*dir_ / "tables").string()}, so);
    ASSERT_TRUE(tables.ok()) << tables.status();
    server_ = new Server(std::move(*tables), so);
    absl::StatusOr<int> port = server_->Bind("127.0.0.1", 0);
    ASSERT_TRUE(port.ok()) << port.status();
    port_ = *port;
    thread_ = new std::thread([] { server_->Run(); });
    httplib::Client c("127.0.0.1", port_);
    for (int i = 0; i < 200; ++i) {
      if (auto r = c.Get("/healthz"); r && r->status == 200) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  static void TearDownTestSuite() {
    server_->Stop();
    thread_->join();
    delete thread_;
    delete server_;
    if (!std::getenv("TT_SERVE_TEST_KEEP")) fs::remove_all(*dir_);
    delete dir_;
  }

  static const Table& T(const std::string& name) {
    for (const NamedTable& t : *server_->tables()) {
      if (t.name == name) return *t.table;
    }
    ADD_FAILURE() << "no table " << name;
    return *(*server_->tables())[0].table;
  }

  struct Got {
    int status = 0;
    std::string body;
    std::string encoding;
  };
  static Got Fetch(const std::string& path, bool gzip = false) {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(60, 0);
    httplib::Headers h;
    if (gzip) {
      h.emplace("Accept-Encoding", "gzip");
      c.set_decompress(false);
    }
    auto r = c.Get(path.c_str(), h);
    if (!r) return {-1, httplib::to_string(r.error()), ""};
    return {r->status, r->body, r->get_header_value("Content-Encoding")};
  }

  // Parses `body`; fails the test if it is not JSON.
  static simdjson::dom::element Parse(simdjson::dom::parser& p, const std::string& body) {
    simdjson::dom::element e;
    auto err = p.parse(body).get(e);
    EXPECT_EQ(err, simdjson::SUCCESS) << body.substr(0, 300);
    return e;
  }

  static std::string Param(const Got& g) {
    simdjson::dom::parser p;
    simdjson::dom::element e;
    if (p.parse(g.body).get(e) != simdjson::SUCCESS) return "<not json>";
    std::string_view v;
    if (e["parameter"].get(v) != simdjson::SUCCESS) return "";
    return std::string(v);
  }

  // The JSON `tracetable query` prints for the same window.
  static std::string Direct(const Table& t, int64_t start, int64_t end, int64_t res,
                            std::vector<uint32_t> tracks = {}) {
    WindowRequest req;
    req.start = start;
    req.end = end;
    req.resolution = res;
    req.tracks = tracks;
    req.limit = kMaxWindowItems;
    absl::StatusOr<WindowResult> r = QueryWindow(t, req);
    EXPECT_TRUE(r.ok());
    std::string out;
    EXPECT_TRUE(AppendWindowJson(t, req, *r, TraceJsonOptions(), &out).ok());
    return out;
  }

  static std::string Us(const Table& t, int64_t rel) { return AbsoluteMicros(t, rel); }

  static fs::path* dir_;
  static Server* server_;
  static std::thread* thread_;
  static int port_;
};

fs::path* ServeTest::dir_ = nullptr;
Server* ServeTest::server_ = nullptr;
std::thread* ServeTest::thread_ = nullptr;
int ServeTest::port_ = 0;

TEST_F(ServeTest, HealthAndTables) {
  Got h = Fetch("/healthz");
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(h.body, "{\"ok\":true,\"tables\":2}\n");

  simdjson::dom::parser p;
  Got g = Fetch("/api/tables");
  ASSERT_EQ(g.status, 200);
  simdjson::dom::element e = Parse(p, g.body);
  simdjson::dom::array tables = e["tables"].get_array();
  ASSERT_EQ(tables.size(), 2u);
  std::map<std::string, simdjson::dom::element> by_name;
  for (simdjson::dom::element t : tables) by_name[std::string(std::string_view(t["name"]))] = t;
  ASSERT_TRUE(by_name.count("multi") && by_name.count("single"));
  EXPECT_EQ(int64_t(by_name["multi"]["hosts"].get_array().size()), 2);
  EXPECT_EQ(uint64_t(by_name["multi"]["events"]), T("multi").meta().num_events());
  EXPECT_EQ(double(by_name["single"]["start_us"]), 1000.0);
  EXPECT_EQ(double(by_name["single"]["end_us"]), 1000.0 + kParents * 100 + 1);

  Got d = Fetch("/api/tables/multi");
  ASSERT_EQ(d.status, 200);
  simdjson::dom::element m = Parse(p, d.body);
  EXPECT_EQ(int64_t(m["processes"].get_array().size()), T("multi").resources().processes_size());
  EXPECT_EQ(Fetch("/api/tables/nope").status, 404);
  EXPECT_EQ(Fetch("/api/tables/multi/nope").status, 404);
  EXPECT_EQ(Fetch("/nothing/here").status, 404);
  // Never a file path: traversal attempts are just unknown tables.
  EXPECT_EQ(Fetch("/api/tables/..%2F..%2Fetc/window").status, 404);
  EXPECT_EQ(Fetch("/api/tables/%2Ftmp%2Fx.tracetable/window").status, 404);
}

// The table answer lists the inputs with their top-level fields verbatim.
TEST_F(ServeTest, TableAnswerHasInputFields) {
  Got d = Fetch("/api/tables/multi");
  ASSERT_EQ(d.status, 200);
  simdjson::dom::parser p;
  simdjson::dom::element e = Parse(p, d.body);
  simdjson::dom::array inputs;
  ASSERT_EQ(e["inputs"].get(inputs), simdjson::SUCCESS) << d.body.substr(0, 300);
  ASSERT_EQ(inputs.size(), 2u);
  int64_t host = -1;
  for (int64_t h = 0; h < 2; ++h) {
    ASSERT_EQ(inputs.at(h)["fields"]["metadata"]["host"].get(host), simdjson::SUCCESS);
    EXPECT_EQ(host, h);
    std::string_view clock;
    ASSERT_EQ(inputs.at(h)["fields"]["metadata"]["clock"].get(clock), simdjson::SUCCESS);
    EXPECT_EQ(clock, "boot");
  }
}

TEST_F(ServeTest, ViewerAssets) {
  Got g = Fetch("/");
  EXPECT_EQ(g.status, 200);
  EXPECT_NE(g.body.find("viewer.js"), std::string::npos);
  EXPECT_EQ(Fetch("/viewer.js").status, 200);
  EXPECT_EQ(Fetch("/viewer.css").status, 200);
  // The viewer's ES modules and worker: module scripts load only with a
  // JavaScript content type.
  httplib::Client c("127.0.0.1", port_);
  for (const char* m : {"/viewer.js", "/util.js", "/time_axis.js", "/tile_cache.js", "/tile_loader.js",
                        "/tile_worker.js", "/tile_fetch.js", "/tile_decode.js", "/renderer.js", "/panels.js", "/memory_panel.js", "/memory_chart.js", "/flows.js"}) {
    auto r = c.Get(m);
    ASSERT_TRUE(r) << m;
    EXPECT_EQ(r->status, 200) << m;
    EXPECT_EQ(r->get_header_value("Content-Type").rfind("application/javascript", 0), 0u) << m;
  }
}

// The JSON the page carries in <script id=ID type="application/json">,
// with "<\/" read back as "</"; "" when it is not there.
std::string BootJson(const std::string& page, std::string_view id) {
  const std::string open = absl::StrCat("<script id=\"", std::string(id), "\" type=\"application/json\">");
  const size_t a = page.find(open);
  if (a == std::string::npos) return "";
  const size_t from = a + open.size(), b = page.find("</script>", from);
  if (b == std::string::npos) return "";
  return absl::StrReplaceAll(page.substr(from, b - from), {{"<\\/", "</"}});
}

// The page carries the table list and the first table's answer, each
// byte for byte the API's.
TEST_F(ServeTest, PageCarriesTheFirstAnswers) {
  Got g = Fetch("/");
  ASSERT_EQ(g.status, 200);
  EXPECT_EQ(g.body.find(std::string(kBootMarker)), std::string::npos);
  const std::string tables = BootJson(g.body, "tt-tables");
  EXPECT_EQ(tables, Fetch("/api/tables").body);
  simdjson::dom::parser p;
  simdjson::dom::element e = Parse(p, tables);
  const std::string first(std::string_view(e["tables"].at(0)["name"]));
  EXPECT_EQ(BootJson(g.body, "tt-table"), Fetch(absl::StrCat("/api/tables/", first)).body);
}

// No text in an answer can end the <script> element it is written into.
TEST(IndexPage, ScriptSafeJson) {
  const std::string json = R"({"name":"a</script><b>","x":"<\/ok"})";
  const std::string safe = ScriptSafeJson(json);
  EXPECT_EQ(safe.find("</"), std::string::npos);
  EXPECT_EQ(safe, R"({"name":"a<\/script><b>","x":"<\/ok"})");
  simdjson::dom::parser p;
  std::string_view name;
  ASSERT_EQ(p.parse(safe)["name"].get(name), simdjson::SUCCESS);
  EXPECT_EQ(name, "a</script><b>");
  EXPECT_EQ(IndexPage("<head>x</head>", {}), "<head>x</head>");
  const std::string page = IndexPage(absl::StrCat("<head>", std::string(kBootMarker), "</head>"), {});
  EXPECT_EQ(BootJson(page, "tt-tables"), TablesReply({}).body);
  EXPECT_EQ(page.find("tt-table\""), std::string::npos);
}

TEST_F(ServeTest, WindowMatchesQueryCommand) {
  const Table& t = T("multi");
  const int64_t s = t.meta().min_ts(), e = t.meta().max_end();
  // Defaults: whole span at span / 2000, like `tracetable query`.
  Got g = Fetch("/api/tables/multi/window");
  ASSERT_EQ(g.status, 200);
  EXPECT_EQ(Canon(g.body), Canon(Direct(t, s, e, (e - s) / 2000)));
  struct Case {
    int64_t a, b, res;
  };
  for (const Case& c : {Case{s, e, 1'000'000}, Case{s + 5'000'000, s + 9'000'000, 100'000},
                        Case{s + 1'234'567, s + 1'334'567, 0}, Case{s, s + 40'000'000, 7'000'000}}) {
    const std::string path = absl::StrCat("/api/tables/multi/window?start_us=", Us(t, c.a), "&end_us=",
                                          Us(t, c.b), "&resolution_us=", FormatMicros(c.res));
    Got w = Fetch(path);
    ASSERT_EQ(w.status, 200) << path << " " << w.body;
    EXPECT_EQ(Canon(w.body), Canon(Direct(t, c.a, c.b, c.res))) << path;
  }
  // Track selection: ids, pid[:tid], host.
  Got tr = Fetch(absl::StrCat("/api/tables/multi/window?tracks=0,2&resolution_us=1"));
  ASSERT_EQ(tr.status, 200);
  EXPECT_EQ(Canon(tr.body), Canon(Direct(t, s, e, 1'000'000, {0, 2})));
  std::vector<uint32_t> host1;
  for (const proto::Track& x : t.resources().tracks()) {
    if (t.resources().processes(x.process()).host() == "host1") host1.push_back(x.id());
  }
  ASSERT_FALSE(host1.empty());
  Got hb = Fetch("/api/tables/multi/window?host=host1&resolution_us=1");
  ASSERT_EQ(hb.status, 200);
  EXPECT_EQ(Canon(hb.body), Canon(Direct(t, s, e, 1'000'000, host1)));
  Got pb = Fetch("/api/tables/single/window?pid=1:2&resolution_us=1");
  ASSERT_EQ(pb.status, 200);
  EXPECT_NE(pb.body.find("fusion."), std::string::npos);
  EXPECT_EQ(pb.body.find("\"Parent\""), std::string::npos);
}

TEST_F(ServeTest, WindowCapsAndGzip) {
  // limit cuts the answer and says so.
  Got g = Fetch("/api/tables/multi/window?resolution_us=0&limit=10");
  ASSERT_EQ(g.status, 200);
  EXPECT_NE(g.body.find("\"truncated\":true"), std::string::npos);
  EXPECT_NE(g.body.find("\"items\":10,"), std::string::npos);
  // gzip when asked.
  Got plain = Fetch("/api/tables/multi/window?resolution_us=2");
  Got zipped = Fetch("/api/tables/multi/window?resolution_us=2", true);
  ASSERT_EQ(zipped.status, 200);
  EXPECT_EQ(zipped.encoding, "gzip");
  EXPECT_LT(zipped.body.size(), plain.body.size() / 3);
  EXPECT_EQ(plain.encoding, "");
  // httplib's client decompresses by default.
  httplib::Client c("127.0.0.1", port_);
  auto r = c.Get("/api/tables/multi/window?resolution_us=2", {{"Accept-Encoding", "gzip"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(Canon(r->body), Canon(plain.body));
}

// tile: the binary answer of QueryTile for the request, with a strong ETag
// that a second request naming it turns into a 304 without a body; the
// same request on another table is another ETag.
TEST_F(ServeTest, TileIsBinaryImmutableAndRevalidates) {
  const Table& t = T("single");
  const int level = 10;  // ~1 us bins, 524 us tiles
  const std::string path = absl::StrCat("/api/tables/single/tile?level=", level, "&k=3&tracks=0,1,2");
  httplib::Client c("127.0.0.1", port_);
  auto r = c.Get(path.c_str());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/octet-stream");
  EXPECT_EQ(r->get_header_value("Cache-Control"), "public, max-age=31536000, immutable");
  const std::string etag = r->get_header_value("ETag");
  const TileRequest req{level, 3, {0, 1, 2}};
  EXPECT_EQ(etag, TileETag(t, req));
  absl::StatusOr<WindowResult> direct = QueryTile(t, req);
  ASSERT_TRUE(direct.ok());
  ASSERT_FALSE(direct->items.empty());
  EXPECT_EQ(r->body, *EncodeTileAnswer(t, req, *direct));
  absl::StatusOr<DecodedTile> d = DecodeTileAnswer(r->body);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->items.size(), direct->items.size());

  auto again = c.Get(path.c_str(), {{"If-None-Match", etag}});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 304);
  EXPECT_TRUE(again->body.empty());
  auto stale = c.Get(path.c_str(), {{"If-None-Match", "\"t0\""}});
  ASSERT_TRUE(stale);
  EXPECT_EQ(stale->status, 200);
  EXPECT_EQ(stale->body, r->body);

  auto other = c.Get(absl::StrCat("/api/tables/multi/tile?level=", level, "&k=3&tracks=0,1,2").c_str());
  ASSERT_TRUE(other);
  ASSERT_EQ(other->status, 200);
  EXPECT_NE(other->get_header_value("ETag"), etag);

  // gzip applies to tiles as to JSON.
  Got zipped = Fetch(path, true);
  EXPECT_EQ(zipped.status, 200);
  EXPECT_EQ(zipped.encoding, "gzip");
  EXPECT_LT(zipped.body.size(), r->body.size());
}

// v=2: the compact layout of the same tile, its own strong ETag (and 304),
// gzip on the wire inflating to exactly the identity bytes, and those
// unpacking to exactly the aligned answer.
TEST_F(ServeTest, CompactTileIsTheSameAnswerAndRevalidates) {
  const Table& t = T("single");
  const std::string path = "/api/tables/single/tile?level=10&k=3&tracks=0,1,2&v=2";
  httplib::Client c("127.0.0.1", port_);
  auto r = c.Get(path.c_str());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const TileRequest req{10, 3, {0, 1, 2}, kTileCompactVersion};
  const std::string etag = r->get_header_value("ETag");
  EXPECT_EQ(etag, TileETag(t, req));
  EXPECT_NE(etag, TileETag(t, {10, 3, {0, 1, 2}}));
  EXPECT_TRUE(absl::StartsWith(r->get_header_value("Server-Timing"), "query;dur=")) << r->get_header_value("Server-Timing");
  EXPECT_NE(r->get_header_value("Server-Timing").find(", encode;dur="), std::string::npos);
  absl::StatusOr<WindowResult> direct = QueryTile(t, req);
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ(r->body, *EncodeTileAnswer(t, req, *direct));
  absl::StatusOr<std::string> aligned = UnpackTileAnswer(r->body);
  ASSERT_TRUE(aligned.ok()) << aligned.status();
  EXPECT_EQ(*aligned, Fetch("/api/tables/single/tile?level=10&k=3&tracks=0,1,2").body);

  Got zipped = Fetch(path, true);
  ASSERT_EQ(zipped.status, 200);
  EXPECT_EQ(zipped.encoding, "gzip");
  EXPECT_EQ(Gunzip(zipped.body), r->body);
  auto again = c.Get(path.c_str(), {{"If-None-Match", etag}, {"Accept-Encoding", "gzip"}});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 304);
  EXPECT_TRUE(again->body.empty());
  for (const char* bad : {"v=3", "v=0", "v=x"}) {
    Got g = Fetch(absl::StrCat("/api/tables/single/tile?level=10&k=3&tracks=0&", bad));
    EXPECT_EQ(g.status, 400) << bad;
    EXPECT_EQ(Param(g), "v") << bad;
  }
}

// A coarse tile made once is kept (under its ETag) and sent again from memory:
// the same bytes as made cold and as QueryTile + EncodeTileAnswer, gzip or
// not, its Server-Timing saying `cache`; the same request on another table
// is that table's own answer, never the kept one.
TEST_F(ServeTest, KeptTileIsTheColdAnswer) {
  // A coarse tile: its level cuts the table into at most 8.
  const int64_t span = T("single").meta().max_end() - T("single").meta().min_ts();
  int level = 0;
  while (TileWidth(level) * 8 < span) ++level;
  ASSERT_GT(level, 0);
  const std::string q = absl::StrCat("tile?level=", level, "&k=0&tracks=0,1,2&v=2");
  httplib::Client c("127.0.0.1", port_);
  auto cold = c.Get(("/api/tables/single/" + q).c_str());
  ASSERT_TRUE(cold);
  ASSERT_EQ(cold->status, 200) << cold->body;
  EXPECT_TRUE(absl::StartsWith(cold->get_header_value("Server-Timing"), "query;dur=")) << cold->get_header_value("Server-Timing");
  auto warm = c.Get(("/api/tables/single/" + q).c_str());
  ASSERT_TRUE(warm);
  ASSERT_EQ(warm->status, 200);
  EXPECT_TRUE(absl::StartsWith(warm->get_header_value("Server-Timing"), "cache;dur=")) << warm->get_header_value("Server-Timing");
  EXPECT_EQ(warm->body, cold->body);
  EXPECT_EQ(warm->get_header_value("ETag"), cold->get_header_value("ETag"));
  EXPECT_EQ(warm->get_header_value("Cache-Control"), "public, max-age=31536000, immutable");
  EXPECT_EQ(warm->get_header_value("Content-Type"), "application/octet-stream");
  const TileRequest req{level, 0, {0, 1, 2}, kTileCompactVersion};
  absl::StatusOr<WindowResult> direct = QueryTile(T("single"), req);
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ(warm->body, *EncodeTileAnswer(T("single"), req, *direct));
  Got zipped = Fetch("/api/tables/single/" + q, true);
  ASSERT_EQ(zipped.status, 200);
  EXPECT_EQ(zipped.encoding, cold->body.size() >= 1024 ? "gzip" : "");  // the server zips from 1 KB
  EXPECT_EQ(zipped.encoding == "gzip" ? Gunzip(zipped.body) : zipped.body, cold->body);

  auto other = c.Get(("/api/tables/multi/" + q).c_str());
  ASSERT_TRUE(other);
  ASSERT_EQ(other->status, 200);
  EXPECT_TRUE(absl::StartsWith(other->get_header_value("Server-Timing"), "query;dur="));
  EXPECT_NE(other->get_header_value("ETag"), cold->get_header_value("ETag"));
  absl::StatusOr<WindowResult> multi = QueryTile(T("multi"), req);
  ASSERT_TRUE(multi.ok());
  EXPECT_EQ(other->body, *EncodeTileAnswer(T("multi"), req, *multi));

  // A finer tile is made again each time (not kept).
  const std::string fine = absl::StrCat("/api/tables/single/tile?level=", level - 1, "&k=1&tracks=0,1,2&v=2");
  for (int i = 0; i < 2; ++i) {
    auto f = c.Get(fine.c_str());
    ASSERT_TRUE(f);
    ASSERT_EQ(f->status, 200);
    EXPECT_TRUE(absl::StartsWith(f->get_header_value("Server-Timing"), "query;dur=")) << i;
  }
}

TEST_F(ServeTest, TileBadRequestsNameTheParameter) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"level=x&k=0&tracks=0", "level"},   {"level=99&k=0&tracks=0", "level"},
      {"level=4&k=-1&tracks=0", "k"},      {"level=4&k=999999999999&tracks=0", "k"},
      {"level=4&k=0", "tracks"},           {"level=4&k=0&tracks=0,9999", "tracks"},
      {"level=4&tracks=0", "k"},
  };
  for (const auto& [query, param] : cases) {
    Got g = Fetch("/api/tables/single/tile?" + query);
    EXPECT_EQ(g.status, 400) << query;
    EXPECT_EQ(Param(g), param) << query;
  }
}

// coarsen=1: over the limit, the answer is the whole window at a coarser
// resolution (exactly what a query at that resolution returns), not a cut.
TEST_F(ServeTest, WindowCoarsensInsteadOfCutting) {
  const Table& t = T("multi");
  const int64_t s = t.meta().min_ts(), e = t.meta().max_end();
  const std::string base = "/api/tables/multi/window?limit=40";  // at span / 2000
  Got cut = Fetch(base);
  ASSERT_EQ(cut.status, 200);
  ASSERT_NE(cut.body.find("\"truncated\":true"), std::string::npos) << "the test needs a cut answer";
  Got g = Fetch(base + "&coarsen=1");
  ASSERT_EQ(g.status, 200) << g.body;
  EXPECT_NE(g.body.find("\"truncated\":false"), std::string::npos);
  const std::string key = "\"resolution_us\":";
  const size_t at = g.body.rfind(key);
  ASSERT_NE(at, std::string::npos);
  const size_t from = at + key.size();
  absl::StatusOr<NsPs> res = ParseMicros(g.body.substr(from, g.body.find(',', from) - from));
  ASSERT_TRUE(res.ok());
  const int64_t coarse = res->ns * 1000 + res->ps;
  EXPECT_GT(coarse, (e - s) / 2000);
  EXPECT_EQ(Canon(g.body), Canon(Direct(t, s, e, coarse)));
  const size_t n = g.body.rfind("\"items\":");
  ASSERT_NE(n, std::string::npos);
  uint64_t items = 0;
  ASSERT_TRUE(absl::SimpleAtoi(g.body.substr(n + 8, g.body.find(',', n) - n - 8), &items));
  EXPECT_GT(items, 0u);
  EXPECT_LE(items, 40u);
}

TEST_F(ServeTest, BadRequestsNameTheParameter) {
  struct Case {
    std::string path;
    int status;
    std::string parameter;
  };
  const std::vector<Case> cases = {
      {"/api/tables/multi/window?start_us=abc", 400, "start_us"},
      {"/api/tables/multi/window?end_us=1e400", 400, "end_us"},
      {"/api/tables/multi/window?start_us=5000&end_us=2000", 400, "end_us"},
      {"/api/tables/multi/window?resolution_us=-1", 400, "resolution_us"},
      {"/api/tables/multi/window?resolution_us=0.000001", 400, "resolution_us"},
      {"/api/tables/multi/window?limit=-3", 400, "limit"},
      {"/api/tables/multi/window?tracks=999", 400, "tracks"},
      {"/api/tables/multi/window?tracks=x", 400, "tracks"},
      {"/api/tables/multi/window?pid=77", 400, "pid"},
      {"/api/tables/multi/window?host=nohost", 400, "host"},
      {"/api/tables/multi/event", 400, "id"},
      {"/api/tables/multi/event?id=abc", 400, "id"},
      {"/api/tables/multi/event?id=999999999", 404, "id"},
      {"/api/tables/multi/search", 400, "q"},
      {"/api/tables/multi/search?q=a&cursor=zzz", 400, "cursor"},
      {"/api/tables/multi/search?q=a&limit=x", 400, "limit"},
      {"/api/tables/multi/search?q=a&start_us=x", 400, "start_us"},
      {"/api/tables/multi/stats?end_us=q", 400, "end_us"},
      {"/api/tables/multi/stats?top=-1", 400, "top"},
      {"/api/tables/nope/window", 404, ""},
      {"/data/plugin/profile/data?run=nope", 404, "run"},
      {"/data/plugin/profile/data", 400, "run"},
      {"/data/plugin/profile/data?run=multi&tag=overview_page", 400, "tag"},
      {"/data/plugin/profile/data?run=multi&start_time_ms=x", 400, "start_time_ms"},
      {"/data/plugin/profile/data?run=multi&resolution=x", 400, "resolution"},
      {"/data/plugin/profile/data?run=multi&unique_id=x", 400, "unique_id"},
  };
  for (const Case& c : cases) {
    Got g = Fetch(c.path);
    EXPECT_EQ(g.status, c.status) << c.path << " " << g.body;
    EXPECT_EQ(Param(g), c.parameter) << c.path << " " << g.body;
    EXPECT_NE(g.body.find("\"error\":"), std::string::npos) << c.path;
  }
}

// Every event of `t` in time order, at resolution 0.
std::vector<WindowItem> AllEvents(const Table& t) {
  WindowRequest req;
  req.start = t.meta().min_ts();
  req.end = t.meta().max_end();
  absl::StatusOr<WindowResult> r = QueryWindow(t, req);
  EXPECT_TRUE(r.ok());
  return r->items;
}

// The event answer: arguments ({} when none) and thread time, for events
// that have either; 404 for the others.
TEST_F(ServeTest, Event) {
  const Table& t = T("multi");
  simdjson::dom::parser p;
  int seen[4] = {0, 0, 0, 0};  // by (has args) + 2 * (has thread time)
  for (const WindowItem& it : AllEvents(t)) {
    if (t.resources().tracks(it.track).kind() == proto::Track::COUNTER) continue;
    const bool has_args = it.row.flags & kFlagHasArgs, has_tt = it.row.flags & kFlagHasThreadTime;
    int& n = seen[has_args + 2 * has_tt];
    if (n >= 5) continue;
    ++n;
    Got g = Fetch(absl::StrCat("/api/tables/multi/event?id=", it.row.id));
    if (!has_args && !has_tt) {
      EXPECT_EQ(g.status, 404) << g.body;
      EXPECT_EQ(Param(g), "id");
      continue;
    }
    ASSERT_EQ(g.status, 200) << g.body;
    simdjson::dom::element e = Parse(p, g.body);
    EXPECT_EQ(uint64_t(e["id"]), it.row.id);
    absl::StatusOr<std::string> args = t.Args(it.row.id);
    ASSERT_EQ(args.ok(), has_args);
    // What the trace gave (HostTrace): ChildA tts = 2 ts, tdur 25; ChildB tts 7.5.
    std::string thread_time;
    const std::string name(t.String(it.row.name));
    if (has_tt && name == "ChildA") {
      int64_t ts = 0;
      ASSERT_TRUE(absl::SimpleAtoi(Us(t, it.row.ts), &ts));
      thread_time = absl::StrCat(",\"tts\":", 2 * ts, ",\"tdur\":25");
    } else if (has_tt) {
      EXPECT_EQ(name, "ChildB");
      thread_time = ",\"tts\":7.5";
    }
    EXPECT_EQ(g.body, absl::StrCat("{\"id\":", it.row.id, ",\"args\":", has_args ? *args : "{}", thread_time, "}\n"));
  }
  for (int k = 0; k < 4; ++k) EXPECT_EQ(seen[k], 5) << k;
}

// HostTrace binds flow i (every fifth parent) from ChildA on tid 1 (an "s"
// inside it) to an "f" on tid 2 that no slice encloses.
TEST_F(ServeTest, FlowEnds) {
  const Table& t = T("single");
  simdjson::dom::parser p;
  Got g = Fetch("/api/tables/single/flow?id=35");
  ASSERT_EQ(g.status, 200) << g.body;
  simdjson::dom::element e = Parse(p, g.body);
  EXPECT_EQ(std::string_view(e["flow"]), "35");
  simdjson::dom::array ends = e["ends"];
  ASSERT_EQ(ends.size(), 2u) << g.body;
  simdjson::dom::element a = ends.at(0), b = ends.at(1);
  EXPECT_EQ(std::string_view(a["name"]), "ChildA");
  EXPECT_EQ(std::string_view(a["dir"]), "out");
  EXPECT_EQ(std::string_view(a["phase"]), "s");
  EXPECT_EQ(double(a["at"]), 4511);
  EXPECT_EQ(double(a["ts"]), 4510);
  EXPECT_EQ(std::string_view(b["name"]), "flow");
  EXPECT_EQ(std::string_view(b["dir"]), "in");
  EXPECT_EQ(double(b["at"]), 4521);
  EXPECT_EQ(int64_t(b["tid"]), 2);
  // The answer is the query's, and sid= (what the viewer sends) gives it too.
  const uint64_t sid = uint64_t(e["sid"]);
  ReadStats stats;
  absl::StatusOr<std::vector<FlowEnd>> direct = FindFlowEnds(t, static_cast<uint32_t>(sid), &stats);
  ASSERT_TRUE(direct.ok());
  ASSERT_EQ(direct->size(), 2u);
  EXPECT_EQ(uint64_t(a["id"]), (*direct)[0].slice.id);
  EXPECT_EQ(uint64_t(b["flow_event"]), (*direct)[1].flow_event_id);
  EXPECT_EQ(Fetch(absl::StrCat("/api/tables/single/flow?sid=", sid)).body, g.body);
  // An id no flow has: no ends; bad requests name their parameter.
  Got none = Fetch("/api/tables/single/flow?id=no-such-flow");
  EXPECT_EQ(none.status, 200);
  EXPECT_EQ(none.body, "{\"flow\":\"no-such-flow\",\"sid\":null,\"ends\":[]}\n");
  EXPECT_EQ(Param(Fetch("/api/tables/single/flow")), "id");
  EXPECT_EQ(Fetch("/api/tables/single/flow?sid=0").status, 400);
  EXPECT_EQ(Param(Fetch("/api/tables/single/flow?sid=99999999")), "sid");
}

// Answers are compared line-sorted, so these tests check content and do not
// depend on how the engine orders items that tie on (track, ts, lane).
std::string Canon(const std::string& body) {
  std::vector<std::string_view> lines;
  size_t s = 0;
  while (s < body.size()) {
    size_t e = body.find('\n', s);
    if (e == std::string::npos) e = body.size();
    lines.push_back(std::string_view(body).substr(s, e - s));
    s = e + 1;
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (std::string_view l : lines) absl::StrAppend(&out, Av(l), "\n");
  return out;
}

std::string Lower(std::string_view s) {
  std::string o(s);
  for (char& c : o) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return o;
}

TEST_F(ServeTest, SearchPagesThroughEveryMatchInOrder) {
  const Table& t = T("multi");
  for (const std::string q : {"CHILDb", "fusion.4", "mark"}) {
    std::vector<std::tuple<int64_t, uint32_t, uint64_t>> want;
    for (const WindowItem& it : AllEvents(t)) {
      if (t.resources().tracks(it.track).kind() == proto::Track::COUNTER) continue;
      if (Lower(t.String(it.row.name)).find(Lower(q)) != std::string::npos) {
        want.emplace_back(it.row.ts, it.track, it.row.id);
      }
    }
    std::sort(want.begin(), want.end());
    ASSERT_FALSE(want.empty()) << q;
    std::vector<uint64_t> got;
    std::string cursor;
    simdjson::dom::parser p;
    for (int page = 0; page < 1000; ++page) {
      Got g = Fetch(absl::StrCat("/api/tables/multi/search?q=", q, "&limit=37",
                                 cursor.empty() ? "" : "&cursor=", cursor));
      ASSERT_EQ(g.status, 200) << g.body;
      simdjson::dom::element e = Parse(p, g.body);
      for (simdjson::dom::element m : e["matches"].get_array()) {
        got.push_back(uint64_t(m["id"]));
        EXPECT_NE(Lower(std::string_view(m["name"])).find(Lower(q)), std::string::npos);
      }
      if (e["next_cursor"].is_null()) break;
      cursor = std::string(std::string_view(e["next_cursor"]));
    }
    ASSERT_EQ(got.size(), want.size()) << q;
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], std::get<2>(want[i])) << q << " #" << i;
  }
  // Pages of one through a span that starts inside events: the events that
  // started before it and overlap it come first, each exactly once.
  {
    const int64_t a = t.meta().min_ts() + 50'000'000, b = t.meta().min_ts() + 450'000'000;
    std::vector<std::tuple<int64_t, uint32_t, uint64_t>> want;
    for (const WindowItem& it : AllEvents(t)) {
      if (t.String(it.row.name) == "Parent" && it.row.ts <= b && it.row.ts + it.row.dur >= a) {
        want.emplace_back(it.row.ts, it.track, it.row.id);
      }
    }
    std::sort(want.begin(), want.end());
    ASSERT_EQ(want.size(), 10u);
    std::vector<uint64_t> got;
    std::string cursor;
    simdjson::dom::parser p;
    for (int page = 0; page < 100; ++page) {
      Got g = Fetch(absl::StrCat("/api/tables/multi/search?q=Parent&limit=1&start_us=", Us(t, a), "&end_us=", Us(t, b),
                                 cursor.empty() ? "" : "&cursor=", cursor));
      ASSERT_EQ(g.status, 200) << g.body;
      simdjson::dom::element e = Parse(p, g.body);
      for (simdjson::dom::element m : e["matches"].get_array()) got.push_back(uint64_t(m["id"]));
      if (e["next_cursor"].is_null()) break;
      cursor = std::string(std::string_view(e["next_cursor"]));
    }
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], std::get<2>(want[i])) << i;
  }
  // A span and a host restrict the matches.
  Got g = Fetch(absl::StrCat("/api/tables/multi/search?q=parent&host=host0&limit=1000&start_us=",
                             Us(t, t.meta().min_ts()), "&end_us=", Us(t, t.meta().min_ts() + 999'000'000)));
  ASSERT_EQ(g.status, 200);
  simdjson::dom::parser p;
  simdjson::dom::element e = Parse(p, g.body);
  EXPECT_EQ(e["matches"].get_array().size(), 10u);  // parents at 0, 100, ..., 900 us
  EXPECT_TRUE(e["next_cursor"].is_null());
}

TEST_F(ServeTest, StatsSelfTime) {
  Got g = Fetch("/api/tables/multi/stats?top=1000&host=host1");
  ASSERT_EQ(g.status, 200);
  simdjson::dom::parser p;
  simdjson::dom::element e = Parse(p, g.body);
  EXPECT_FALSE(bool(e["truncated"]));
  std::map<std::string, std::tuple<uint64_t, double, double>> names;
  for (simdjson::dom::element n : e["names"].get_array()) {
    names[std::string(std::string_view(n["name"]))] = {uint64_t(n["count"]), double(n["total_us"]), double(n["self_us"])};
  }
  EXPECT_EQ(names["Parent"], std::make_tuple(uint64_t{kParents}, 80.0 * kParents, 30.0 * kParents));
  EXPECT_EQ(names["ChildA"], std::make_tuple(uint64_t{kParents}, 30.0 * kParents, 30.0 * kParents));
  EXPECT_EQ(names["ChildB"], std::make_tuple(uint64_t{kParents}, 20.0 * kParents, 20.0 * kParents));
  EXPECT_EQ(std::get<0>(names["Mark"]), uint64_t{kParents / 5});
  // Sorted by self time, largest first.
  simdjson::dom::array arr = e["names"].get_array();
  double prev = 1e300;
  for (simdjson::dom::element n : arr) {
    EXPECT_LE(double(n["self_us"]), prev);
    prev = double(n["self_us"]);
  }
  // A window clips durations: [1000+10, 1000+50] us of host1 holds 35 us of
  // Parent (10..80 clipped to 50), ChildA 30 us.
  const Table& t = T("multi");
  const int64_t origin = t.meta().min_ts();
  Got w = Fetch(absl::StrCat("/api/tables/multi/stats?host=host1&pid=1:1&top=5&start_us=", Us(t, origin + 10'000'000),
                             "&end_us=", Us(t, origin + 50'000'000)));
  ASSERT_EQ(w.status, 200) << w.body;
  simdjson::dom::element we = Parse(p, w.body);
  std::map<std::string, std::pair<double, double>> clipped;
  for (simdjson::dom::element n : we["names"].get_array()) {
    clipped[std::string(std::string_view(n["name"]))] = {double(n["total_us"]), double(n["self_us"])};
  }
  EXPECT_EQ(clipped["Parent"], std::make_pair(40.0, 5.0));  // 40 covered - 30 ChildA - 5 ChildB
  EXPECT_EQ(clipped["ChildA"], std::make_pair(30.0, 30.0));
  EXPECT_EQ(clipped["ChildB"], std::make_pair(5.0, 5.0));
}

TEST_F(ServeTest, ConcurrentClients) {
  const Table& t = T("multi");
  const int64_t s = t.meta().min_ts(), e = t.meta().max_end();
  struct Req {
    std::string path, want;
  };
  std::vector<Req> reqs;
  for (int i = 0; i < 24; ++i) {
    const int64_t a = s + (e - s) / 24 * i, b = std::min(e, a + (e - s) / (1 + i % 5));
    const int64_t res = (b - a) / (100 + 300 * (i % 4));
    reqs.push_back({absl::StrCat("/api/tables/multi/window?start_us=", Us(t, a), "&end_us=", Us(t, b),
                                 "&resolution_us=", FormatMicros(res)),
                    Canon(Direct(t, a, b, res))});
  }
  // Other calls, checked against their answer to a lone request.
  for (const std::string path : {"/api/tables/multi/search?q=child&limit=50", "/api/tables/multi/stats?top=10",
                                 "/api/tables/single/stats?pid=1:2&top=5", "/api/tables/multi/event?id=3",
                                 "/data/plugin/profile/data?run=multi&tag=trace_viewer@&resolution=500",
                                 "/api/tables/multi/window?start_us=bad"}) {
    Got g = Fetch(path);
    ASSERT_EQ(g.status, path.find("bad") == std::string::npos ? 200 : 400) << path;
    reqs.push_back({path, Canon(g.body)});
  }
  std::atomic<int> errors{0}, mismatches{0}, ok{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 16; ++c) {
    clients.emplace_back([&, c] {
      httplib::Client cl("127.0.0.1", port_);
      cl.set_keep_alive(true);
      cl.set_read_timeout(60, 0);
      for (int i = 0; i < 200; ++i) {
        const Req& r = reqs[(c * 7 + i) % reqs.size()];
        auto res = cl.Get(r.path.c_str(), {{"Accept-Encoding", i % 2 ? "gzip" : "identity"}});
        if (!res || (res->status != 200 && r.path.find("bad") == std::string::npos)) {
          ++errors;
        } else if (Canon(res->body) != r.want) {
          ++mismatches;
        } else {
          ++ok;
        }
      }
    });
  }
  for (std::thread& th : clients) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(ok.load(), 16 * 200);
}

// Checks one XProf answer: the object shape, (pid, ts, z) unique, args.uid on
// every event, returnedEventsSize, events overlapping the span.
void CheckXprof(const std::string& body, double start_ms, double end_ms, size_t* events) {
  simdjson::dom::parser p;
  simdjson::dom::element e;
  ASSERT_EQ(p.parse(body).get(e), simdjson::SUCCESS) << body.substr(0, 200);
  EXPECT_EQ(std::string_view(e["displayTimeUnit"]), "ns");
  EXPECT_TRUE(bool(e["filteredByVisibility"]));
  simdjson::dom::array span = e["fullTimespan"].get_array();
  ASSERT_EQ(span.size(), 2u);
  EXPECT_LE(double(span.at(0)), double(span.at(1)));
  std::set<std::tuple<std::string, double, int64_t>> keys;
  size_t n = 0;
  for (simdjson::dom::element ev : e["traceEvents"].get_array()) {
    std::string_view ph = ev["ph"];
    if (ph == "M") continue;
    ++n;
    const double ts = double(ev["ts"]);
    double dur = 0;
    if (ev["dur"].get(dur) != simdjson::SUCCESS) dur = 0;
    EXPECT_LE(ts, end_ms * 1000 + 1e-3);
    // Counters also carry the sample in effect at the start (query/window.h).
    if (ph != "C") {
      EXPECT_GE(ts + dur, start_ms * 1000 - 1e-3);
    }
    EXPECT_TRUE(keys.insert({simdjson::to_string(ev["pid"]), ts, int64_t(ev["z"])}).second)
        << "duplicate (pid, ts, z) " << simdjson::to_string(ev);
    EXPECT_FALSE(ev["args"]["uid"].error()) << simdjson::to_string(ev);
  }
  EXPECT_EQ(uint64_t(e["returnedEventsSize"]), n);
  *events = n;
}

TEST_F(ServeTest, XprofRecordedSequence) {
  // Each line: [expect STATUS] METHOD PATH; "{details}" asks for the details
  // of the first real X event of the previous answer.
  std::ifstream in(std::string(TRACETABLE_SOURCE_DIR) + "/tests/serve/xprof_requests.txt");
  ASSERT_TRUE(in.good());
  std::string line, previous;
  int requests = 0;
  std::vector<size_t> window_sizes;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    int status = 0;
    std::string method, path;
    ls >> status >> method >> path;
    ASSERT_EQ(method, "GET") << line;
    if (path.find("{details}") != std::string::npos) {
      // First non-summary X event of the previous answer.
      simdjson::dom::parser p;
      simdjson::dom::element e = Parse(p, previous);
      std::string q;
      for (simdjson::dom::element ev : e["traceEvents"].get_array()) {
        std::string_view cat;
        if (std::string_view(ev["ph"]) != "X" || ev["cat"].get(cat) || cat == "tracetable.summary") continue;
        char buf[64];
        std::snprintf(buf, sizeof(buf), "%.6f", double(ev["ts"]) / 1000);
        q = absl::StrCat("event_name=", httplib::detail::encode_query_param(std::string(std::string_view(ev["name"]))),
                         "&start_time_ms=", buf, "&duration_ms=", double(ev["dur"]) / 1000,
                         "&unique_id=", uint64_t(ev["args"]["uid"]));
        break;
      }
      ASSERT_FALSE(q.empty());
      path.replace(path.find("{details}"), 9, q);
    }
    Got g = Fetch(path);
    ++requests;
    ASSERT_EQ(g.status, status) << path << " " << g.body.substr(0, 300);
    if (status != 200) continue;
    httplib::Params params;
    httplib::detail::parse_query_text(path.substr(path.find('?') + 1), params);
    const Table& t = T(params.count("run") ? params.find("run")->second : "multi");
    const double origin_ms = static_cast<double>(t.meta().origin_ns()) / 1e6;
    double start_ms = origin_ms + t.meta().min_ts() / 1e9, end_ms = origin_ms + t.meta().max_end() / 1e9;
    if (params.count("start_time_ms") && !params.count("unique_id")) start_ms = std::stod(params.find("start_time_ms")->second);
    if (params.count("end_time_ms")) end_ms = std::stod(params.find("end_time_ms")->second);
    size_t n = 0;
    CheckXprof(g.body, start_ms, end_ms, &n);
    if (params.count("unique_id")) {
      EXPECT_EQ(n, 1u) << path;
      EXPECT_NE(g.body.find("\"uid\":" + params.find("unique_id")->second), std::string::npos);
    } else if (params.count("search_prefix")) {
      const std::string pre = Lower(params.find("search_prefix")->second);
      simdjson::dom::parser p;
      for (simdjson::dom::element ev : Parse(p, g.body)["traceEvents"].get_array()) {
        if (std::string_view(ev["ph"]) == "M") continue;
        EXPECT_EQ(Lower(std::string_view(ev["name"])).rfind(pre, 0), 0u) << simdjson::to_string(ev);
      }
      EXPECT_GT(n, 0u) << path;
    } else {
      window_sizes.push_back(n);
      EXPECT_GT(n, 0u) << path;
    }
    previous = g.body;
  }
  EXPECT_GE(requests, 8);
  EXPECT_GE(window_sizes.size(), 4u);
}

}  // namespace
}  // namespace tracetable::serve
