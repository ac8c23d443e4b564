// Micro-benchmark: the Chrome JSON reader (ingest/chrome_json/reader.h) on a
// buffer of generated events, per event and per byte. The buffer is written
// once to a file in /dev/shm (memory, when it is a tmpfs), because the reader
// reads from a path; each iteration parses the whole file.
//
// Two sinks: "null" answers every call with a constant (the reader alone);
// "counting" interns strings and tracks as a real builder does but keeps no
// events. Moved here from tests/chrome_json/bench_chrome_json.cc, which took
// a file and an MB count on its command line.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "ingest/chrome_json/reader.h"

namespace tracetable {
namespace {

class CountingSink : public MetadataDroppingSink {
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
  uint32_t InstantTrack(IdToken pid, bool global) override {
    return Track(global ? std::string("/g") : std::string(pid.text) + "/p");
  }
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

// One generated file for the whole process, removed at exit.
struct BenchFile {
  std::string path;
  uint64_t bytes = 0;
};

const BenchFile& File() {
  // Never destroyed, so the exit handler can still read its path.
  static const BenchFile* file = [] {
    const std::string dir = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
    auto* f = new BenchFile{dir + "/tt_micro_chrome_json_" + std::to_string(getpid()) + ".json"};
    Generate(f->path, 16);
    f->bytes = std::filesystem::file_size(f->path);
    std::atexit([] { std::filesystem::remove(File().path); });
    return f;
  }();
  return *file;
}

void BM_ReadChromeJson(benchmark::State& state) {
  const BenchFile& file = File();
  uint64_t events = 0;
  for (auto _ : state) {
    CountingSink sink(state.range(0) != 0);
    absl::Status s = ReadChromeJson(file.path, "", &sink);
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      break;
    }
    events = sink.events;
    benchmark::DoNotOptimize(sink.checksum);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * file.bytes));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * events));
  state.counters["events"] = static_cast<double>(events);
}
BENCHMARK(BM_ReadChromeJson)->Arg(1)->Arg(0)->ArgName("null_sink")->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tracetable

