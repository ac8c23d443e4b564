// tt_shards_query: the cost of answering over a run of shards (store/run_table.h)
// next to one merged table of the same hosts.
//
// usage: tt_shards_query build HOSTS_DIR OUT_DIR   (one table of HOSTS_DIR/*.json
//            as OUT_DIR/merged.tracetable, one shard per file under OUT_DIR/run/)
//        tt_shards_query tiny N OUT_DIR             (a run of N tiny hosts)
//        tt_shards_query window PATH [REPEAT] [MAX_OPEN]
//        tt_shards_query view RUN                   (rewrite RUN's manifest, which writes RUN.view)
// `window` opens PATH (a table or a run), answers its whole-span window at
// ~2000 bins over every track (Chrome JSON text included) REPEAT times and
// prints one JSON line: open_ms, first_ms (open excluded), the median of the
// others (warm_ms), items, and the process's open file descriptors.
#include <dirent.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ingest/input.h"
#include "query/trace_json.h"
#include "query/window.h"
#include "store/run_manifest.h"
#include "store/table.h"
#include "store/table_builder.h"

namespace tracetable {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

int OpenFds() {
  int n = 0;
  for (const auto& e : fs::directory_iterator("/proc/self/fd")) {
    (void)e;
    ++n;
  }
  return n;
}

absl::Status Build(const std::vector<std::string>& inputs, const std::string& out, std::optional<int64_t> origin) {
  absl::StatusOr<std::vector<InputFile>> files = ExpandInputs(inputs);
  if (!files.ok()) return files.status();
  BuildOptions opts;
  opts.output = out;
  opts.origin_ns = origin;
  absl::StatusOr<std::unique_ptr<TableBuilder>> b = TableBuilder::Create(opts);
  if (!b.ok()) return b.status();
  if (absl::Status s = ReadInputs(*files, b->get(), {}); !s.ok()) return s;
  return (*b)->Finish();
}

// One shard per input (in path order, on the first one's origin) and the
// RUN manifest listing them.
absl::Status BuildRun(const std::vector<std::string>& inputs, const std::string& run) {
  std::optional<int64_t> origin;
  for (const std::string& in : inputs) {
    const std::string host = fs::path(in).stem().string();
    const std::string dir = absl::StrCat(run, "/", ShardDirFor(host));
    fs::create_directories(fs::path(dir).parent_path());
    if (absl::Status s = Build({in}, dir, origin); !s.ok()) return s;
    absl::StatusOr<std::unique_ptr<Table>> t = Table::Open(dir);
    if (!t.ok()) return t.status();
    if (!origin) origin = (*t)->meta().origin_ns();
    RunShardInfo info;
    info.host = host;
    info.dir = ShardDirFor(host);
    info.table_id = (*t)->identity();
    info.input_name = fs::path(in).filename().string();
    info.min_ts = (*t)->meta().min_ts();
    info.max_end = (*t)->meta().max_end();
    info.num_events = (*t)->meta().num_events();
    info.event_ids = (*t)->meta().event_ids();
    absl::Status s = UpdateRunManifest(run, [&](RunManifest& m) {
      m.origin_ns = *origin;
      m.Put(info);
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

std::vector<std::string> JsonFiles(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".json") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

int Window(const std::string& path, int repeat, size_t max_open) {
  const auto t0 = Clock::now();
  Table::Options o;
  o.max_open_shards = max_open;
  absl::StatusOr<std::unique_ptr<Table>> t = Table::Open(path, o);
  if (!t.ok()) {
    std::fprintf(stderr, "%s\n", std::string(t.status().message()).c_str());
    return 1;
  }
  const double open_ms = Ms(t0, Clock::now());
  WindowRequest req;
  req.start = (*t)->meta().min_ts();
  req.end = (*t)->meta().max_end();
  req.resolution = std::max<int64_t>(1, (req.end - req.start) / 2000);
  std::vector<double> ms;
  size_t items = 0, bytes = 0;
  for (int i = 0; i < repeat; ++i) {
    const auto a = Clock::now();
    absl::StatusOr<WindowResult> r = QueryWindow(**t, req);
    if (!r.ok()) {
      std::fprintf(stderr, "%s\n", std::string(r.status().message()).c_str());
      return 1;
    }
    std::string json;
    if (absl::Status s = AppendWindowJson(**t, req, *r, TraceJsonOptions(), &json); !s.ok()) return 1;
    ms.push_back(Ms(a, Clock::now()));
    items = r->items.size();
    bytes = json.size();
  }
  std::vector<double> warm(ms.begin() + 1, ms.end());
  std::sort(warm.begin(), warm.end());
  std::printf("{\"path\":\"%s\",\"open_ms\":%.2f,\"first_ms\":%.2f,\"warm_ms\":%.2f,\"items\":%zu,\"json_bytes\":%zu,"
              "\"tracks\":%d,\"fds\":%d}\n",
              path.c_str(), open_ms, ms[0], warm.empty() ? ms[0] : warm[warm.size() / 2], items, bytes,
              (*t)->resources().tracks_size(), OpenFds());
  return 0;
}

// N hosts of a few dozen events on one span (so one summary grid).
absl::Status Tiny(int n, const std::string& out) {
  const std::string in = absl::StrCat(out, "/tiny-hosts");
  fs::create_directories(in);
  for (int h = 0; h < n; ++h) {
    std::ofstream f(absl::StrCat(in, "/h", 10000 + h, ".json"));
    f << "{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1000,\"dur\":50000,\"name\":\"step\"}";
    for (int i = 0; i < 30; ++i) {
      f << ",{\"ph\":\"X\",\"pid\":1,\"tid\":" << 2 + i % 3 << ",\"ts\":" << 1000 + (i * 1637 + h * 17) % 49000
        << ",\"dur\":" << 1 + (i * 7 + h) % 90 << ",\"name\":\"op" << i % 11 << "\"}";
    }
    f << "]}\n";
  }
  return BuildRun(JsonFiles(in), absl::StrCat(out, "/run", n));
}

}  // namespace
}  // namespace tracetable

int main(int argc, char** argv) {
  using namespace tracetable;
  const std::vector<std::string> a(argv + 1, argv + argc);
  absl::Status s = absl::InvalidArgumentError("usage: see the comment at the top of bench/shards_query.cc");
  if (a.size() == 3 && a[0] == "build") {
    const auto t0 = Clock::now();
    s = Build({a[1]}, a[2] + "/merged.tracetable", std::nullopt);
    const auto t1 = Clock::now();
    if (s.ok()) s = BuildRun(JsonFiles(a[1]), a[2] + "/run");
    std::printf("{\"merged_build_s\":%.1f,\"run_build_s\":%.1f}\n", Ms(t0, t1) / 1000, Ms(t1, Clock::now()) / 1000);
  } else if (a.size() == 3 && a[0] == "tiny") {
    s = Tiny(std::stoi(a[1]), a[2]);
  } else if (a.size() == 2 && a[0] == "view") {
    s = UpdateRunManifest(a[1], [](RunManifest&) { return absl::OkStatus(); });
  } else if (a.size() >= 2 && a[0] == "window") {
    return Window(a[1], a.size() > 2 ? std::stoi(a[2]) : 5, a.size() > 3 ? std::stoul(a[3]) : 64);
  }
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
