// The memory profile against a brute-force reference computed from the raw
// input (the Kineto JSON and the XSpace proto read directly, not through the
// ingester; generated traces from the list of events written): the in-use
// curve, the peak (value and time) and the allocations live at the peak and
// at other times, compared exactly with `tracetable memory --json` and
// GET /api/tables/{t}/memory.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/common.h"
#include "format/keys.h"
#include "format/memory_segment_codec.h"
#include "format/time.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "ingest/xspace/xplane.pb.h"
#include "tests/table_edit.h"
#include "query/serve/server.h"
#include "simdjson.h"
#include "zlib.h"
#include "tests/run_cli.h"

namespace tracetable {
namespace {
namespace fs = std::filesystem;

// One memory event of the input, as the reference reads it.
struct Raw {
  std::string host, id;
  __int128 ts = 0;  // absolute ps
  int op = 0;       // 1 alloc, 2 free, 0 neither
  bool has_addr = false;
  uint64_t addr = 0;
  int64_t bytes = -1;  // -1: not given
  bool has_total = false;
  int64_t total = 0;
  std::string tf_op, shape, data_type;
};

struct Live {
  int64_t bytes;
  uint64_t addr;
  __int128 ts;
  size_t order;
  std::string tf_op, shape, data_type;
};

struct State {
  __int128 ts = 0;
  int64_t in_use = 0;
  std::vector<Live> live;  // largest first, ties in allocation order
};

// The brute force: one memory ID's events in (ts, input order). States are
// replayed from the start when asked for, so long traces stay cheap.
struct Reference {
  std::vector<Raw> events;                          // in (ts, input order)
  std::vector<std::pair<__int128, int64_t>> curve;  // after each event
  size_t peak = 0;                                  // index of the first maximum
  uint64_t frees_without_alloc = 0, never_freed = 0;
};

// The state after the first n events; with `r`, also fills its curve, peak
// and unpaired counts.
State Replay(const std::vector<Raw>& ev, size_t n, Reference* r = nullptr) {
  std::vector<Live> allocs;
  std::vector<bool> live;
  std::map<uint64_t, std::vector<size_t>> open;
  int64_t in_use = 0;
  for (size_t k = 0; k < n; ++k) {
    const Raw& e = ev[k];
    int64_t size = e.bytes < 0 ? 0 : e.bytes;
    bool unpaired = false;
    if (e.op == 1) {
      allocs.push_back({size, e.addr, e.ts, allocs.size(), e.tf_op, e.shape, e.data_type});
      live.push_back(true);
      if (e.has_addr) open[e.addr].push_back(allocs.size() - 1);
    } else if (e.op == 2 && e.has_addr) {
      auto it = open.find(e.addr);
      if (it != open.end() && !it->second.empty()) {
        live[it->second.back()] = false;
        if (e.bytes < 0) size = allocs[it->second.back()].bytes;
        it->second.pop_back();
      } else {
        unpaired = true;
      }
    } else if (e.op == 2) {
      unpaired = true;
    }
    in_use = e.has_total ? e.total : in_use + (e.op == 1 ? size : e.op == 2 ? -size : 0);
    if (r) {
      r->frees_without_alloc += unpaired;
      if (r->curve.empty() || in_use > r->curve[r->peak].second) r->peak = r->curve.size();
      r->curve.push_back({e.ts, in_use});
    }
  }
  if (r) r->never_freed = static_cast<uint64_t>(std::count(live.begin(), live.end(), true));
  State s;
  s.ts = n > 0 ? ev[n - 1].ts : 0;
  s.in_use = in_use;
  for (size_t i = 0; i < allocs.size(); ++i) {
    if (live[i]) s.live.push_back(allocs[i]);
  }
  std::stable_sort(s.live.begin(), s.live.end(), [](const Live& a, const Live& b) { return a.bytes > b.bytes; });
  return s;
}

Reference Compute(std::vector<Raw> ev) {
  std::stable_sort(ev.begin(), ev.end(), [](const Raw& a, const Raw& b) { return a.ts < b.ts; });
  Reference r;
  r.events = std::move(ev);
  Replay(r.events, r.events.size(), &r);
  return r;
}

// The state after every event at or before `t`, if any.
std::optional<State> At(const Reference& r, __int128 t) {
  size_t n = 0;
  while (n < r.curve.size() && r.curve[n].first <= t) ++n;
  if (n == 0) return std::nullopt;
  return Replay(r.events, n);
}

std::string Us(__int128 ps) { return FormatMicros(ps); }

std::string ReadFile(const std::string& path) {
  std::string out;
  gzFile f = gzopen(path.c_str(), "rb");
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, n);
  gzclose(f);
  return out;
}

// Kineto "[memory]" instants straight from the JSON text.
std::vector<Raw> KinetoEvents(const std::string& json, const std::string& host) {
  simdjson::dom::parser p;
  simdjson::dom::element doc = p.parse(json);
  std::vector<Raw> out;
  for (simdjson::dom::element e : doc["traceEvents"].get_array()) {
    std::string_view name;
    if (e["name"].get(name) || name != "[memory]") continue;
    simdjson::dom::object a = e["args"].get_object();
    Raw r;
    r.host = host;
    int64_t type = a["Device Type"].get_int64().value(), dev = a["Device Id"].get_int64().value();
    r.id = type == 0 ? "cpu" : "cuda";
    if (dev >= 0) r.id = absl::StrCat(r.id, ":", dev);
    const std::string ts = simdjson::to_string(e["ts"]);  // integers print exactly
    absl::StatusOr<NsPs> t = ParseMicros(std::string(ts));
    r.ts = static_cast<__int128>(t->ns) * 1000 + t->ps;
    int64_t bytes = a["Bytes"].get_int64().value();
    r.op = bytes > 0 ? 1 : bytes < 0 ? 2 : 0;
    r.bytes = bytes < 0 ? -bytes : bytes;
    uint64_t addr;
    if (!a["Addr"].get_uint64().get(addr)) {
      r.has_addr = true;
      r.addr = addr;
    }
    int64_t total;
    if (!a["Total Allocated"].get_int64().get(total)) {
      r.has_total = true;
      r.total = total;
    }
    out.push_back(r);
  }
  return out;
}

// XSpace MemoryAllocation / MemoryDeallocation straight from the proto.
std::vector<Raw> XSpaceEvents(const std::string& path, const std::string& host) {
  xspace::XSpace space;
  EXPECT_TRUE(space.ParseFromString(ReadFile(path)));
  std::vector<Raw> out;
  for (const xspace::XPlane& plane : space.planes()) {
    auto stat_name = [&](int64_t id) {
      auto it = plane.stat_metadata().find(id);
      return it == plane.stat_metadata().end() ? std::string() : it->second.name();
    };
    for (const xspace::XLine& line : plane.lines()) {
      for (const xspace::XEvent& ev : line.events()) {
        auto md = plane.event_metadata().find(ev.metadata_id());
        if (md == plane.event_metadata().end()) continue;
        const std::string& name = md->second.name();
        if (name != "MemoryAllocation" && name != "MemoryDeallocation") continue;
        Raw r;
        r.host = host;
        r.op = name == "MemoryAllocation" ? 1 : 2;
        r.ts = static_cast<__int128>(line.timestamp_ns()) * 1000 + ev.offset_ps();
        std::map<std::string, const xspace::XStat*> stats;
        for (const xspace::XStat& s : md->second.stats()) stats[stat_name(s.metadata_id())] = &s;
        for (const xspace::XStat& s : ev.stats()) stats[stat_name(s.metadata_id())] = &s;
        auto num = [&](const char* k, int64_t* v) {
          auto it = stats.find(k);
          if (it == stats.end()) return false;
          const xspace::XStat& s = *it->second;
          *v = s.has_int64_value() ? s.int64_value() : s.has_uint64_value() ? static_cast<int64_t>(s.uint64_value())
                                                                            : static_cast<int64_t>(s.double_value());
          return true;
        };
        auto text = [&](const char* k) {
          auto it = stats.find(k);
          if (it == stats.end()) return std::string();
          const xspace::XStat& s = *it->second;
          return s.has_ref_value() ? stat_name(static_cast<int64_t>(s.ref_value())) : s.str_value();
        };
        r.id = text("allocator_name");
        int64_t v;
        if (num("allocation_bytes", &v)) r.bytes = v;
        if (num("addr", &v)) {
          r.has_addr = true;
          r.addr = static_cast<uint64_t>(v);
        }
        int64_t heap, stack = 0;
        if (num("bytes_allocated", &heap)) {
          num("bytes_reserved", &stack);
          r.has_total = true;
          r.total = heap + stack;
        }
        r.tf_op = text("tf_op");
        // TensorFlow's allocator names the shape stat "shape".
        r.shape = stats.count("tensor_shape") ? text("tensor_shape") : text("shape");
        if (num("data_type", &v)) r.data_type = absl::StrCat(v);
        out.push_back(r);
      }
    }
  }
  return out;
}

std::map<std::pair<std::string, std::string>, Reference> References(const std::vector<Raw>& all) {
  std::map<std::pair<std::string, std::string>, std::vector<Raw>> by;
  for (const Raw& r : all) by[{r.host, r.id}].push_back(r);
  std::map<std::pair<std::string, std::string>, Reference> out;
  for (auto& [k, v] : by) out[k] = Compute(v);
  return out;
}

class MemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / absl::StrCat("tt_memory_test_", getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "tables");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Ingest(const std::vector<std::string>& inputs, const std::string& name,
                     const std::vector<std::string>& options = {}) {
    const std::string out = (dir_ / "tables" / (name + ".tracetable")).string();
    std::vector<std::string> args = {"ingest"};
    args.insert(args.end(), inputs.begin(), inputs.end());
    args.insert(args.end(), {"-o", out, "-q"});
    args.insert(args.end(), options.begin(), options.end());
    EXPECT_EQ(RunCli(cli::IngestMain, args), 0);
    EXPECT_EQ(RunCli(cli::VerifyMain, {"verify", out}), 0);
    return out;
  }

  // The CLI's JSON for one ID at the peak (at = "") or at a time.
  std::string Cli(const std::string& table, const std::string& host, const std::string& id, const std::string& at) {
    std::vector<std::string> args = {"memory", table, "--id", id, "--json", "--limit", "0"};
    if (!host.empty()) args.insert(args.end(), {"--host", host});
    if (!at.empty()) args.insert(args.end(), {"--at-us", at});
    std::string out;
    EXPECT_EQ(RunCli(cli::MemoryMain, args, &out), 0);
    return out;
  }

  std::string Http(const std::string& table_name, const std::string& host, const std::string& id,
                   const std::string& at, bool timeline) {
    std::string path = absl::StrCat("/api/tables/", table_name, "/memory?limit=0&id=", id);
    if (!host.empty()) absl::StrAppend(&path, "&host=", host);
    if (!at.empty()) absl::StrAppend(&path, "&at_us=", at);
    absl::StrAppend(&path, timeline ? "&resolution_us=0" : "&timeline=0");
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(60, 0);
    auto r = c.Get(path.c_str());
    EXPECT_TRUE(r) << path;
    if (!r) return "";
    EXPECT_EQ(r->status, 200) << r->body;
    return r->body;
  }

  void StartServer() {
    serve::ServeOptions so;
    so.threads = 4;
    absl::StatusOr<std::vector<serve::NamedTable>> tables = serve::OpenTables({(dir_ / "tables").string()}, so);
    ASSERT_TRUE(tables.ok()) << tables.status();
    server_ = std::make_unique<serve::Server>(std::move(*tables), so);
    absl::StatusOr<int> port = server_->Bind("127.0.0.1", 0);
    ASSERT_TRUE(port.ok());
    port_ = *port;
    thread_ = std::thread([this] { server_->Run(); });
    httplib::Client c("127.0.0.1", port_);
    for (int i = 0; i < 200; ++i) {
      if (auto r = c.Get("/healthz"); r && r->status == 200) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  void StopServer() {
    if (!server_) return;
    server_->Stop();
    thread_.join();
    server_.reset();
  }
  ~MemoryTest() override { StopServer(); }

  // One breakdown answer (the only one in `body`) equals the reference state.
  static void ExpectBreakdown(const std::string& body, const State* s, __int128 at, bool peak) {
    simdjson::dom::parser p;
    simdjson::dom::element doc;
    ASSERT_FALSE(p.parse(body).get(doc)) << body.substr(0, 300);
    simdjson::dom::array bs = doc["breakdowns"].get_array();
    ASSERT_EQ(bs.size(), 1u);
    simdjson::dom::element b = bs.at(0);
    EXPECT_EQ(std::string(b["at"].get_string().value()), peak ? "peak" : "time");
    if (!s) {
      EXPECT_TRUE(b["before_first_event"].get_bool().value());
      EXPECT_EQ(b["in_use"].get_int64().value(), 0);
      EXPECT_EQ(b["rows"].get_array().size(), 0u);
      return;
    }
    (void)at;
    EXPECT_EQ(std::string(simdjson::to_string(b["ts_us"])), Us(s->ts));
    EXPECT_EQ(b["in_use"].get_int64().value(), s->in_use);
    simdjson::dom::array rows = b["rows"].get_array();
    ASSERT_EQ(rows.size(), s->live.size());
    int64_t sum = 0;
    size_t i = 0;
    for (simdjson::dom::element row : rows) {
      const Live& l = s->live[i++];
      EXPECT_EQ(row["bytes"].get_int64().value(), l.bytes) << "row " << i;
      EXPECT_EQ(std::string(row["addr"].get_string().value()), absl::StrCat("0x", absl::Hex(l.addr))) << "row " << i;
      EXPECT_EQ(std::string(simdjson::to_string(row["alloc_us"])), Us(l.ts)) << "row " << i;
      EXPECT_EQ(std::string(row["op"].get_string().value()), l.tf_op);
      EXPECT_EQ(std::string(row["shape"].get_string().value()), l.shape) << "row " << i;
      EXPECT_EQ(std::string(row["data_type"].get_string().value()), l.data_type) << "row " << i;
      sum += l.bytes;
    }
    EXPECT_EQ(b["live_bytes"].get_int64().value(), sum);
    EXPECT_EQ(b["unattributed"].get_int64().value(), s->in_use - sum);
  }

  // One answer for an ID at the peak (at = "") or at a time, through the
  // CLI or (once the server holds the tables) over HTTP.
  std::string Answer(const std::string& table, const std::string& name, const std::string& host,
                     const std::string& id, const std::string& at) {
    return server_ ? Http(name, host, id, at, false) : Cli(table, host, id, at);
  }

  // Every memory ID of the table against the reference: peak, breakdowns at
  // the peak and at a few times, and (HTTP) the whole in-use curve. Called
  // once before StartServer (CLI) and once after (HTTP): the server holds
  // the tables' locks.
  void CheckAll(const std::string& table, const std::string& name,
                const std::map<std::pair<std::string, std::string>, Reference>& refs) {
    if (!server_) {
      std::string ids_json;
      ASSERT_EQ(RunCli(cli::MemoryMain, {"memory", table, "--json", "--limit", "1"}, &ids_json), 0);
      simdjson::dom::parser p;
      simdjson::dom::element doc;
      ASSERT_FALSE(p.parse(ids_json).get(doc));
      EXPECT_EQ(doc["ids"].get_array().size(), refs.size());
    }
    for (const auto& [key, ref] : refs) {
      const auto& [host, id] = key;
      SCOPED_TRACE(absl::StrCat(name, " ", host, " ", id, server_ ? " (HTTP)" : " (CLI)"));
      const State peak = Replay(ref.events, ref.peak + 1);
      {
        const std::string body = Answer(table, name, host, id, "");
        simdjson::dom::parser q;
        simdjson::dom::element d;
        ASSERT_FALSE(q.parse(body).get(d));
        simdjson::dom::element m = d["ids"].get_array().at(0);
        EXPECT_EQ(m["peak"]["in_use"].get_int64().value(), peak.in_use);
        EXPECT_EQ(std::string(simdjson::to_string(m["peak"]["ts_us"])), Us(peak.ts));
        EXPECT_EQ(m["events"].get_uint64().value(), ref.curve.size());
        EXPECT_EQ(m["unpaired"]["frees_without_alloc"].get_uint64().value(), ref.frees_without_alloc);
        EXPECT_EQ(m["unpaired"]["allocs_never_freed"].get_uint64().value(), ref.never_freed);
        ExpectBreakdown(body, &peak, peak.ts, true);
      }
      // The in-use curve: every sample, in order, at resolution 0.
      if (server_) {
        simdjson::dom::parser q;
        simdjson::dom::element d;
        const std::string body = Http(name, host, id, "", true);
        ASSERT_FALSE(q.parse(body).get(d));
        simdjson::dom::array series = d["timelines"].get_array().at(0)["series"].get_array();
        simdjson::dom::element in_use = series.at(0);
        EXPECT_EQ(std::string(in_use["name"].get_string().value()), "in use bytes");
        simdjson::dom::array samples = in_use["samples"].get_array();
        if (id == "cuda:0") {  // constant Total Reserved: one sample, not one per event
          simdjson::dom::element reserved = series.at(1);
          EXPECT_EQ(std::string(reserved["name"].get_string().value()), "reserved bytes");
          EXPECT_EQ(reserved["samples"].get_array().size(), 1u);
        }
        ASSERT_EQ(samples.size(), ref.curve.size());
        size_t i = 0;
        for (simdjson::dom::element s : samples) {
          EXPECT_EQ(std::string(simdjson::to_string(s.at(0))), Us(ref.curve[i].first)) << i;
          EXPECT_EQ(s.at(1).get_double().value(), static_cast<double>(ref.curve[i].second)) << i;
          ++i;
        }
      }
      // Before the first event, at event times and between them.
      std::vector<__int128> times = {ref.curve.front().first - 1000000};
      for (size_t k = 1; k <= 5; ++k) {
        const __int128 t = ref.curve[(ref.curve.size() - 1) * k / 5].first;
        times.push_back(t);
        times.push_back(t + 1);
      }
      for (__int128 t : times) {
        const std::optional<State> s = At(ref, t);
        ExpectBreakdown(Answer(table, name, host, id, Us(t)), s ? &*s : nullptr, t, false);
      }
    }
  }

  fs::path dir_;
  std::unique_ptr<serve::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

TEST_F(MemoryTest, RealKinetoAndXSpaceTracesMatchBruteForce) {
  const std::string kineto = std::string(TRACETABLE_SHARED_TRACES) + "/kineto/df_index_resolver.json.gz";
  const std::string xspace = std::string(TRACETABLE_SHARED_TRACES) + "/xspace/gpu_multi_worker_host179.xplane.pb";
  if (!fs::exists(kineto) || !fs::exists(xspace)) GTEST_SKIP() << "shared traces missing";
  const std::string k = Ingest({kineto}, "kineto");
  const std::string x = Ingest({xspace}, "xspace");
  auto kref = References(KinetoEvents(ReadFile(kineto), ""));
  const std::vector<Raw> xevents = XSpaceEvents(xspace, "34.83.195.179:6003");
  // The breakdowns' shapes and data types are compared below: the trace has them.
  EXPECT_TRUE(std::any_of(xevents.begin(), xevents.end(), [](const Raw& r) { return !r.shape.empty(); }));
  EXPECT_TRUE(std::any_of(xevents.begin(), xevents.end(), [](const Raw& r) { return !r.data_type.empty(); }));
  auto xref = References(xevents);
  ASSERT_EQ(kref.size(), 2u);  // cuda:1 and cpu
  ASSERT_GE(xref.size(), 2u);
  CheckAll(k, "kineto", kref);
  CheckAll(x, "xspace", xref);
  StartServer();
  CheckAll(k, "kineto", kref);
  CheckAll(x, "xspace", xref);
}

// A Kineto-style and an XSpace-style allocator per host, written as JSON:
// interleaved allocations and frees, frees without allocations, allocations
// never freed, address reuse, ties at one time, an older writer without
// totals (running sum), and two hosts.
TEST_F(MemoryTest, GeneratedTracesMatchBruteForce) {
  std::vector<Raw> all;
  std::vector<std::string> files;
  for (int h = 0; h < 2; ++h) {
    const std::string host = absl::StrCat("host", h);
    std::ostringstream o;
    o << "{\"traceEvents\":[\n";
    o << "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":5000,\"name\":\"step\"}";
    uint64_t seed = 12345 + h;
    auto rnd = [&seed](uint64_t n) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      return (seed >> 33) % n;
    };
    std::map<std::string, std::vector<std::pair<uint64_t, int64_t>>> live;  // per allocator: (addr, bytes)
    std::map<std::string, int64_t> total;
    for (int i = 0; i < 3000; ++i) {
      const int dev = static_cast<int>(rnd(3));  // 0: cuda:0 with totals, 1: cuda:1 running sum, 2: XSpace-style
      const std::string id = dev == 0 ? "cuda:0" : dev == 1 ? "cuda:1" : "GPU_0_bfc";
      const int64_t ts = 10 + i / 2;  // pairs of events share a time
      std::vector<std::pair<uint64_t, int64_t>>& l = live[id];
      Raw r;
      r.host = host;
      r.id = id;
      r.ts = static_cast<__int128>(ts) * 1'000'000;
      r.has_addr = true;
      const uint64_t kind = rnd(10);
      if (kind < 5 || l.empty()) {  // allocate; addresses repeat (reuse)
        r.op = 1;
        r.addr = 0x1000 + rnd(200) * 0x100;
        r.bytes = 256 * (1 + static_cast<int64_t>(rnd(64)));
        l.push_back({r.addr, r.bytes});
      } else if (kind < 9) {  // free a live one
        const size_t k = rnd(l.size());
        r.op = 2;
        r.addr = l[k].first;
        r.bytes = l[k].second;
        l.erase(l.begin() + k);
      } else {  // free of something never allocated in the trace
        r.op = 2;
        r.addr = 0x900000 + rnd(1000);
        r.bytes = 512;
      }
      total[id] += r.op == 1 ? r.bytes : -r.bytes;
      if (dev != 1) {
        r.has_total = true;
        r.total = total[id] + 1'000'000;  // memory allocated before the trace
      }
      if (dev == 2) {
        r.tf_op = absl::StrCat("op", rnd(7));
        o << ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":2,\"ts\":" << ts << ",\"dur\":0,\"name\":\""
          << (r.op == 1 ? "MemoryAllocation" : "MemoryDeallocation") << "\",\"args\":{\"allocator_name\":\"" << id
          << "\",\"addr\":" << r.addr << ",\"allocation_bytes\":" << r.bytes << ",\"requested_bytes\":" << r.bytes
          << ",\"bytes_allocated\":" << r.total << ",\"bytes_reserved\":0,\"bytes_available\":" << (1 << 30)
          << ",\"fragmentation\":0.25,\"tf_op\":\"" << r.tf_op << "\",\"step_id\":" << i / 100 << "}}";
      } else {
        o << ",\n{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":1,\"ts\":" << ts << ",\"name\":\"[memory]\",\"args\":{"
          << "\"Device Type\":1,\"Device Id\":" << dev << ",\"Addr\":" << r.addr << ",\"Bytes\":"
          << (r.op == 1 ? r.bytes : -r.bytes);
        if (r.has_total) o << ",\"Total Allocated\":" << r.total << ",\"Total Reserved\":" << (1 << 30);
        o << "}}";
      }
      all.push_back(r);
    }
    o << "\n]}\n";
    const std::string path = (dir_ / absl::StrCat(host, ".json")).string();
    std::ofstream(path) << o.str();
    files.push_back(path);
  }
  const std::string t = Ingest(files, "gen");
  auto refs = References(all);
  ASSERT_EQ(refs.size(), 6u);
  CheckAll(t, "gen", refs);
  // --host filters, and a wrong one is an error, not an empty answer.
  std::string out;
  ASSERT_EQ(RunCli(cli::MemoryMain, {"memory", t, "--host", "host1", "--json"}, &out), 0);
  simdjson::dom::parser p;
  simdjson::dom::element d = p.parse(out);
  EXPECT_EQ(d["ids"].get_array().size(), 3u);
  for (simdjson::dom::element id : d["ids"].get_array()) EXPECT_EQ(std::string(id["host"].get_string().value()), "host1");
  EXPECT_NE(RunCli(cli::MemoryMain, {"memory", t, "--host", "nohost"}), 0);
  // info reports every memory ID with its unpaired counts.
  ASSERT_EQ(RunCli(cli::InfoMain, {"info", t, "--json"}, &out), 0);
  simdjson::dom::parser pi;
  simdjson::dom::element info = pi.parse(out);
  uint64_t frees_without_alloc = 0, reported = 0;
  for (const auto& [k, ref] : refs) frees_without_alloc += ref.frees_without_alloc;
  for (simdjson::dom::element m : info["memory"].get_array()) {
    reported += m["unpaired"]["frees_without_alloc"].get_uint64().value();
  }
  EXPECT_EQ(info["memory"].get_array().size(), 6u);
  EXPECT_EQ(reported, frees_without_alloc);
  EXPECT_GT(reported, 0u);
  StartServer();
  CheckAll(t, "gen", refs);
  // The same table as format version 5 wrote it (segments' columns as they
  // are, not as differences) gives the same answers, through the CLI.
  StopServer();
  int rewritten = 0;
  EditTable(t, [&](std::map<std::string, std::string>* records) {
    for (auto& [key, value] : *records) {
      if (key == kMetaKey) {
        proto::TableMeta meta;
        ASSERT_TRUE(meta.ParseFromString(value));
        meta.set_format_version(5);
        value = meta.SerializeAsString();
      } else if (key[0] == kMemorySegmentPrefix) {
        proto::MemorySegment seg;
        ASSERT_TRUE(seg.ParseFromString(value));
        ASSERT_EQ(seg.coding(), kSegmentDifferences);
        ASSERT_TRUE(DecodeSegmentColumns(&seg).ok());
        value = seg.SerializeAsString();
        ++rewritten;
      }
    }
  });
  EXPECT_GE(rewritten, 6);
  CheckAll(t, "gen", refs);
}

// A long trace at a small budget: records, frees and the curve spill to
// files, and allocations live across many segments are carried in each.
TEST_F(MemoryTest, LongTraceAtSmallBudgetMatchesBruteForce) {
  std::vector<Raw> all;
  std::ostringstream o;
  o << "{\"traceEvents\":[\n";
  o << "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":5000,\"name\":\"step\"}";
  uint64_t seed = 777;
  auto rnd = [&seed](uint64_t n) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (seed >> 33) % n;
  };
  std::vector<std::pair<uint64_t, int64_t>> live;  // (addr, bytes)
  uint64_t next_addr = 0x10000;
  int64_t total = 0;
  constexpr int kEvents = 80000;  // ~20 segments; 40k allocations: past every buffer at 16M
  for (int i = 0; i < kEvents; ++i) {
    Raw r;
    r.id = "cuda:0";
    r.ts = static_cast<__int128>(10 + i / 3) * 1'000'000;
    r.has_addr = true;
    // About 2,000 live at once, some for most of the trace.
    if (live.empty() || rnd(1000) < (live.size() < 2000 ? 520u : 480u)) {
      r.op = 1;
      r.addr = rnd(4) == 0 && !live.empty() ? live[rnd(live.size())].first : next_addr += 0x100;
      r.bytes = 512 * (1 + static_cast<int64_t>(rnd(100)));
      live.push_back({r.addr, r.bytes});
    } else {
      const size_t k = rnd(live.size());
      r.op = 2;
      r.addr = live[k].first;
      r.bytes = live[k].second;
      live[k] = live.back();
      live.pop_back();
    }
    total += r.op == 1 ? r.bytes : -r.bytes;
    r.has_total = true;
    r.total = total;
    o << ",\n{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":1,\"ts\":" << 10 + i / 3
      << ",\"name\":\"[memory]\",\"args\":{\"Device Type\":1,\"Device Id\":0,\"Addr\":" << r.addr
      << ",\"Bytes\":" << (r.op == 1 ? r.bytes : -r.bytes) << ",\"Total Allocated\":" << r.total
      << ",\"Total Reserved\":" << (int64_t{1} << 40) << "}}";
    all.push_back(r);
  }
  o << "\n]}\n";
  const std::string path = (dir_ / "long.json").string();
  std::ofstream(path) << o.str();
  const std::string t = Ingest({path}, "long", {"--memory-budget", "16M"});
  auto refs = References(all);
  ASSERT_EQ(refs.size(), 1u);
  EXPECT_GT(refs.begin()->second.never_freed, 1000u);
  CheckAll(t, "long", refs);
  // Carried allocations: later segments start with many live ones.
  uint32_t segments = 0, most_carried = 0;
  EditTable(t, [&](std::map<std::string, std::string>* records) {
    for (auto& [key, value] : *records) {
      if (key[0] != kMemorySegmentPrefix) continue;
      proto::MemorySegment seg;
      ASSERT_TRUE(seg.ParseFromString(value));
      ++segments;
      most_carried = std::max(most_carried, seg.carried());
    }
  });
  EXPECT_GE(segments, 10u);
  EXPECT_GT(most_carried, 1000u);
  StartServer();
  CheckAll(t, "long", refs);
}

// A damaged segment is an error, never an answer.
TEST_F(MemoryTest, DamagedSegmentIsAnError) {
  const std::string path = (dir_ / "one.json").string();
  std::ofstream(path) << "{\"traceEvents\":[{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":1,\"ts\":5,\"name\":\"[memory]\","
                         "\"args\":{\"Device Type\":1,\"Device Id\":0,\"Addr\":16,\"Bytes\":64}}]}\n";
  const std::string t = Ingest({path}, "one");
  ASSERT_EQ(RunCli(cli::MemoryMain, {"memory", t}), 0);
  EditTable(t, [](std::map<std::string, std::string>* records) {
    std::string key = "Y";
    key.append(8, '\0');
    (*records)[key] = "\x08\x05garbage";
  });
  EXPECT_NE(RunCli(cli::MemoryMain, {"memory", t}), 0);
  EXPECT_NE(RunCli(cli::VerifyMain, {"verify", t}), 0);
  StartServer();
  httplib::Client c("127.0.0.1", port_);
  auto r = c.Get("/api/tables/one/memory");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 500) << r->body;
  EXPECT_NE(r->body.find("does not parse"), std::string::npos) << r->body;
}

// breakdown=0 leaves the breakdowns out and keeps the timelines (the
// viewer's chart asks for them on every zoom); without it both come.
TEST_F(MemoryTest, HttpBreakdownOff) {
  const std::string path = (dir_ / "one.json").string();
  std::ofstream(path) << "{\"traceEvents\":[{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":1,\"ts\":5,\"name\":\"[memory]\","
                         "\"args\":{\"Device Type\":1,\"Device Id\":0,\"Addr\":16,\"Bytes\":64}},"
                         "{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":1,\"ts\":9,\"name\":\"[memory]\","
                         "\"args\":{\"Device Type\":1,\"Device Id\":0,\"Addr\":16,\"Bytes\":-64}}]}\n";
  Ingest({path}, "one");
  StartServer();
  httplib::Client c("127.0.0.1", port_);
  auto sizes = [&](const char* query) {
    auto r = c.Get(absl::StrCat("/api/tables/one/memory?", query).c_str());
    EXPECT_TRUE(r && r->status == 200) << query;
    simdjson::dom::parser p;
    simdjson::dom::element d = p.parse(r ? r->body : std::string("{}"));
    EXPECT_EQ(d["ids"].get_array().size(), 1u) << query;
    return std::pair{d["breakdowns"].get_array().size(), d["timelines"].get_array().size()};
  };
  EXPECT_EQ(sizes("id=cuda:0"), (std::pair<size_t, size_t>{1, 1}));
  EXPECT_EQ(sizes("id=cuda:0&breakdown=0"), (std::pair<size_t, size_t>{0, 1}));
  EXPECT_EQ(sizes("id=cuda:0&breakdown=0&at_us=6"), (std::pair<size_t, size_t>{0, 1}));
  EXPECT_EQ(sizes("id=cuda:0&breakdown=1&timeline=0"), (std::pair<size_t, size_t>{1, 0}));
}

// --no-memory-profile (for benchmarks) stores the events and derives nothing.
TEST_F(MemoryTest, IngestWithoutMemoryProfile) {
  const std::string path = (dir_ / "one.json").string();
  std::ofstream(path) << "{\"traceEvents\":[{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":1,\"ts\":5,\"name\":\"[memory]\","
                         "\"args\":{\"Device Type\":1,\"Device Id\":0,\"Addr\":16,\"Bytes\":64}}]}\n";
  const std::string t = (dir_ / "tables" / "off.tracetable").string();
  ASSERT_EQ(RunCli(cli::IngestMain, {"ingest", path, "-o", t, "-q", "--no-memory-profile"}), 0);
  std::string out;
  ASSERT_EQ(RunCli(cli::MemoryMain, {"memory", t, "--json"}, &out), 0);
  simdjson::dom::parser p;
  simdjson::dom::element d = p.parse(out);
  EXPECT_EQ(d["ids"].get_array().size(), 0u);
  ASSERT_EQ(RunCli(cli::InfoMain, {"info", t, "--json"}, &out), 0);
  EXPECT_NE(out.find("\"events\":1"), std::string::npos) << out;
}

}  // namespace
}  // namespace tracetable
