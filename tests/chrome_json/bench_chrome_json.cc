// Throughput check for the Chrome JSON reader (not a unit test).
//
//   bench_chrome_json [path] [megabytes] [--null-sink]
//
// Writes an X-heavy trace of about `megabytes` MB to `path` (default
// /tmp/tt_chrome_json_bench.json, 200 MB) unless it exists, then reads it
// five times with a sink that interns strings and tracks like a real builder
// but keeps no events, and prints the best MB/s (file bytes / time).
// --null-sink answers every sink call with a constant, which measures the
// reader alone.
#include <time.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "ingest/chrome_json/reader.h"

namespace tracetable {
namespace {

class CountingSink : public EventSink {
 public:
  explicit CountingSink(bool null_sink) : null_(null_sink) {}
  void BeginInput(std::string_view, std::string_view) override {}
  uint32_t Intern(std::string_view s) override {
    if (null_) return static_cast<uint32_t>(s.size());
    // Look up without building a std::string, as a real builder does.
    auto it = strings_.find(absl::string_view(s.data(), s.size()));
    if (it != strings_.end()) return it->second;
    return strings_.emplace(std::string(s), strings_.size()).first->second;
  }
  absl::StatusOr<int64_t> ToRelativePs(int64_t ns, int32_t ps) override {
    if (!have_origin_) {
      origin_ = ns;
      have_origin_ = true;
    }
    return (ns - origin_) * 1000 + ps;
  }
  uint32_t ThreadTrack(IdToken pid, IdToken tid) override {
    if (null_) return 1;
    return Track(std::string(pid.text) + "/" + std::string(tid.text));
  }
  uint32_t CounterTrack(IdToken pid, std::string_view c, std::string_view s) override {
    return Track(std::string(pid.text) + "/" + std::string(c) + "/" + std::string(s));
  }
  uint32_t AsyncTrack(IdToken pid, std::string_view name) override {
    return Track(std::string(pid.text) + "/a/" + std::string(name));
  }
  void SetProcessName(IdToken, std::string_view) override {}
  void SetProcessSortIndex(IdToken, int64_t) override {}
  void AddProcessLabel(IdToken, std::string_view) override {}
  void SetThreadName(IdToken, IdToken, std::string_view) override {}
  void SetThreadSortIndex(IdToken, IdToken, int64_t) override {}
  void SetInputField(std::string_view, std::string_view) override {}
  absl::Status Add(const Event& e) override {
    ++events;
    args_bytes += e.args_json.size();
    checksum += e.ts + e.dur + e.name;
    return absl::OkStatus();
  }
  void CountSkipped(std::string_view, uint64_t n) override { skipped += n; }
  void Warn(std::string_view m) override {
    std::fprintf(stderr, "warn: %.*s\n", static_cast<int>(m.size()), m.data());
  }

  uint64_t events = 0, skipped = 0, args_bytes = 0;
  int64_t checksum = 0;

 private:
  uint32_t Track(const std::string& key) {
    if (null_) return 1;
    auto [it, inserted] = tracks_.try_emplace(key, tracks_.size());
    return it->second;
  }
  absl::flat_hash_map<std::string, uint32_t> strings_, tracks_;
  int64_t origin_ = 0;
  bool have_origin_ = false;
  bool null_ = false;
};

// Events shaped like Chrome's and Kineto's X events: epoch-scale fractional
// ts, a few dozen names, small args on some of them.
void Generate(const std::string& path, uint64_t megabytes) {
  std::ofstream out(path, std::ios::binary);
  std::mt19937_64 rng(42);
  const char* names[] = {"MessageLoop::RunTask", "ThreadControllerImpl::RunTask",
                         "aten::matmul", "cudaLaunchKernel", "v8.run",
                         "LayerTreeHost::UpdateLayers", "ncclAllReduce", "Paint"};
  const char* cats[] = {"toplevel", "cpu_op", "cuda_runtime", "v8", "cc"};
  out << "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"bench\"},\"traceEvents\":[\n";
  uint64_t bytes = 0, target = megabytes << 20;
  uint64_t ts_ns = 1680000000000000000ull / 1000;  // ns
  char buf[512];
  for (uint64_t i = 0; bytes < target; ++i) {
    ts_ns += rng() % 5000;
    int n = 0;
    if (i % 4 == 0) {
      n = std::snprintf(buf, sizeof buf,
                        "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,"
                        "\"ts\":%llu.%03llu,\"dur\":%llu.%03llu,\"args\":{\"External id\":%llu,"
                        "\"Sequence number\":%llu,\"Fwd thread id\":0}},\n",
                        cats[i % 5], names[(i / 3) % 8], 1000 + static_cast<int>(i % 3),
                        static_cast<int>(rng() % 16),
                        static_cast<unsigned long long>(ts_ns / 1000),
                        static_cast<unsigned long long>(ts_ns % 1000),
                        static_cast<unsigned long long>(rng() % 100000 / 1000),
                        static_cast<unsigned long long>(rng() % 1000),
                        static_cast<unsigned long long>(i),
                        static_cast<unsigned long long>(i * 7));
    } else {
      n = std::snprintf(buf, sizeof buf,
                        "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,"
                        "\"ts\":%llu.%03llu,\"dur\":%llu.%03llu,\"args\":{}},\n",
                        cats[i % 5], names[(i / 3) % 8], 1000 + static_cast<int>(i % 3),
                        static_cast<int>(rng() % 16),
                        static_cast<unsigned long long>(ts_ns / 1000),
                        static_cast<unsigned long long>(ts_ns % 1000),
                        static_cast<unsigned long long>(rng() % 100000 / 1000),
                        static_cast<unsigned long long>(rng() % 1000));
    }
    out.write(buf, n);
    bytes += static_cast<uint64_t>(n);
  }
  out << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1000,\"args\":{\"name\":\"bench\"}}\n]}\n";
}

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

int Main(int argc, char** argv) {
  bool null_sink = false;
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--null-sink") {
      null_sink = true;
    } else {
      args.emplace_back(argv[i]);
    }
  }
  std::string path = args.size() > 0 ? args[0] : "/tmp/tt_chrome_json_bench.json";
  uint64_t mb = args.size() > 1 ? std::stoull(args[1]) : 200;
  if (!std::filesystem::exists(path)) {
    std::fprintf(stderr, "generating %s (%llu MB)\n", path.c_str(),
                 static_cast<unsigned long long>(mb));
    Generate(path, mb);
  }
  const double size_mb = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
  double best = 0, best_cpu = 0;
  for (int run = 0; run < 5; ++run) {
    CountingSink sink(null_sink);
    auto t0 = std::chrono::steady_clock::now();
    double c0 = ThreadCpuSeconds();
    absl::Status s = ReadChromeJson(path, "", &sink);
    double cpu = ThreadCpuSeconds() - c0;
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!s.ok()) {
      std::fprintf(stderr, "error: %s\n", std::string(s.message()).c_str());
      return 1;
    }
    double rate = size_mb / secs;
    best = std::max(best, rate);
    best_cpu = std::max(best_cpu, size_mb / cpu);
    std::printf("run %d: %.1f MB in %.3f s wall (%.3f s cpu) = %.0f MB/s wall, %.0f MB/s cpu, "
                "%llu events (%.2f M events/s), checksum %lld\n",
                run, size_mb, secs, cpu, rate, size_mb / cpu,
                static_cast<unsigned long long>(sink.events),
                static_cast<double>(sink.events) / secs / 1e6,
                static_cast<long long>(sink.checksum));
  }
  // CPU time excludes waiting for other processes on a shared machine.
  std::printf("best: %.0f MB/s wall, %.0f MB/s single-core cpu time\n", best, best_cpu);
  return 0;
}

}  // namespace
}  // namespace tracetable

int main(int argc, char** argv) { return tracetable::Main(argc, argv); }
