// One JSON input parsed on several threads (ingest/chrome_json/parallel_runs.h)
// must give the table a one-thread read gives, record for record: the same
// string and track ids, events, skip counts and warnings (with the same byte
// offsets), and the same error under --strict. Runs are forced small so their
// boundaries fall everywhere: after strings holding "}, {", escapes, nested
// args, between the B and E of a pair, between the ends of a flow.
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "ingest/input.h"
#include "store/table_builder.h"
#include "store/table_files.h"
#include "tests/shared_traces.h"

namespace tracetable {
namespace {
namespace fs = std::filesystem;

class Scratch {
 public:
  Scratch() : dir_(fs::temp_directory_path() / ("tt_parallel_" + std::to_string(getpid()))) {
    fs::create_directories(dir_);
  }
  ~Scratch() { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

 private:
  fs::path dir_;
};

// Every record of a table; the meta's random table_id is cleared (and the
// meta compared as a message, its maps in any order).
struct Built {
  absl::Status status;
  std::map<std::string, std::string> records;
  proto::TableMeta meta;
};

Built Build(const Scratch& dir, const std::vector<std::string>& inputs, int threads,
            size_t run_bytes, bool strict = false, int tile_threads = 0,
            uint64_t memory_budget = uint64_t{64} << 20) {
  Built out;
  absl::StatusOr<std::vector<InputFile>> files = ExpandInputs(inputs);
  if (!files.ok()) {
    out.status = files.status();
    return out;
  }
  const std::string table = dir.Path(absl::StrCat("t", threads, "_", run_bytes, ".tracetable"));
  BuildOptions opts;
  opts.output = table;
  opts.memory_budget = memory_budget;
  opts.tile_threads = tile_threads;
  opts.overwrite = true;
  absl::StatusOr<std::unique_ptr<TableBuilder>> b = TableBuilder::Create(opts);
  if (!b.ok()) {
    out.status = b.status();
    return out;
  }
  out.status = ReadInputs(*files, b->get(), {},
                          ReadInputsOptions{.strict = strict, .threads = threads, .run_bytes = run_bytes});
  if (out.status.ok()) out.status = (*b)->Finish();
  b->reset();
  if (!out.status.ok()) return out;
  absl::StatusOr<std::unique_ptr<TableFiles>> tf = TableFiles::Open(table, nullptr);
  EXPECT_TRUE(tf.ok()) << tf.status();
  if (!tf.ok()) return out;
  std::unique_ptr<leveldb::Iterator> it = (*tf)->NewIterator();
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    out.records[it->key().ToString()] = it->value().ToString();
  }
  EXPECT_TRUE(it->status().ok());
  EXPECT_TRUE(out.meta.ParseFromString(out.records["M"]));
  out.meta.clear_table_id();
  out.records.erase("M");
  return out;
}

void ExpectSame(const Built& want, const Built& got, const std::string& what) {
  ASSERT_EQ(want.status.ok(), got.status.ok()) << what << ": " << want.status << " vs " << got.status;
  if (!want.status.ok()) {
    EXPECT_EQ(want.status, got.status) << what;
    return;
  }
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(want.meta, got.meta))
      << what << "\none thread:\n" << want.meta.DebugString() << "\nparallel:\n" << got.meta.DebugString();
  ASSERT_EQ(want.records.size(), got.records.size()) << what;
  size_t differ = 0;
  for (auto a = want.records.begin(), b = got.records.begin(); a != want.records.end(); ++a, ++b) {
    if (a->first != b->first || a->second != b->second) {
      if (++differ <= 3) ADD_FAILURE() << what << ": record " << a->first << " / " << b->first << " differs";
    }
  }
  EXPECT_EQ(differ, 0u) << what;
}

// A trace whose text is hard to split: strings that look like event
// boundaries, escapes, deep args, pairs and flows spread over many events.
std::string RandomTrace(uint32_t seed, int events) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
  const std::vector<std::string> names = {
      "step", "a}, {\\\"ph\\\": \\\"X\\\"", "quote\\\"d", "back\\\\slash\\\\", "tab\\tnew\\nline",
      "\\u00e9t\\u00e9", "caf\xc3\xa9", "]}, ", "{\\\"x\\\":1}", "", "\\\\\\\"", "end\\\\"};
  std::string t = pick(2) ? "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n" : "[";
  double ts = 1000;
  std::vector<std::pair<int, int>> open;  // B without E: pid, tid
  for (int i = 0; i < events; ++i) {
    if (i > 0) t += pick(3) == 0 ? ",\n  " : ",";
    ts += pick(50) / 7.0;
    const int pid = 1 + pick(3), tid = 10 + pick(4);
    const std::string& name = names[static_cast<size_t>(pick(static_cast<int>(names.size())))];
    const std::string where = absl::StrCat("\"pid\":", pid, ",\"tid\":", pick(5) == 0 ? absl::StrCat("\"t", tid, "\"") : absl::StrCat(tid));
    const std::string time = absl::StrCat("\"ts\":", ts);
    std::string args;
    switch (pick(4)) {
      case 0: break;
      case 1: args = ",\"args\":{}"; break;
      case 2: args = absl::StrCat(",\"args\":{\"k\":[{\"a\":", pick(9), "},{\"b\":\"}, {\\\"ph\\\":\\\"B\\\"\"}],\"s\":\"x\\\\\\\"y\"}"); break;
      default: args = absl::StrCat(",\"args\":{\"deep\":{\"er\":{\"est\":[[", pick(100), ",\"]\"],{}]}}}"); break;
    }
    switch (pick(10)) {
      case 0:
        t += absl::StrCat("{\"ph\":\"B\",\"name\":\"", name, "\",", where, ",", time, args, "}");
        open.push_back({pid, tid});
        break;
      case 1:
        t += absl::StrCat("{\"ph\":\"E\",", where, ",", time, "}");
        break;
      case 2:
        t += absl::StrCat("{\"ph\":\"", std::string(1, "stf"[pick(3)]), "\",\"id\":", pick(6), ",\"name\":\"flow\",\"cat\":\"c\",", where, ",", time,
                          pick(2) ? ",\"bp\":\"e\"" : "", "}");
        break;
      case 3:
        t += absl::StrCat("{\"ph\":\"C\",\"name\":\"", name, "\",\"pid\":", pid, ",", time, ",\"args\":{\"v\":", pick(1000),
                          ",\"w\":\"", pick(10), "\",\"bad\":\"no\"}}");
        break;
      case 4:
        t += absl::StrCat("{\"ph\":\"i\",\"s\":\"", std::string(1, "gpt"[pick(3)]), "\",\"name\":\"", name, "\",", where, ",", time, "}");
        break;
      case 5:
        t += absl::StrCat("{\"ph\":\"", std::string(1, "ben"[pick(3)]), "\",\"id2\":{\"local\":\"0x", pick(4), "\"},\"cat\":\"gpu\",\"name\":\"", name,
                          "\",", where, ",", time, "}");
        break;
      case 6:
        t += absl::StrCat("{\"ph\":\"M\",\"name\":\"", pick(2) ? "thread_name" : "process_name", "\",", where,
                          ",\"args\":{\"name\":\"", name, "\"}}");
        break;
      case 7:
        t += absl::StrCat("{\"ph\":\"X\",\"name\":\"", name, "\",", where, ",", time, args, "}");  // no dur
        break;
      default:
        t += absl::StrCat("{\"name\":\"", name, "\",\"cat\":\"op\",\"ph\":\"X\",", time, ",\"dur\":", pick(300) / 3.0, ",", where,
                          args, pick(4) == 0 ? ",\"tts\":5,\"tdur\":1" : "", "}");
        break;
    }
  }
  t += t[0] == '{' ? "],\"otherData\":{\"v\":\"}, {\"}}" : "]";
  return t;
}

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

void WriteGzip(const std::string& path, const std::string& text) {
  gzFile f = gzopen(path.c_str(), "wb1");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  gzclose(f);
}

TEST(ParallelParse, RandomTracesAnyRunSize) {
  Scratch dir;
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    const std::string path = dir.Path(absl::StrCat("r", seed, seed % 2 ? ".json" : ".json.gz"));
    const std::string text = RandomTrace(seed, 1500);
    if (seed % 2) {
      Write(path, text);
    } else {
      WriteGzip(path, text);
    }
    const Built one = Build(dir, {path}, 1, 0);
    ASSERT_TRUE(one.status.ok()) << one.status;
    ASSERT_GT(one.meta.num_events(), 1000u);
    for (size_t run : {size_t{1}, size_t{37}, size_t{200}, size_t{1000}, size_t{4099}, size_t{0}}) {
      for (int threads : {2, 3}) {
        ExpectSame(one, Build(dir, {path}, threads, run), absl::StrCat(path, " run ", run, " threads ", threads));
      }
    }
  }
}

// Several inputs (hosts) of one table read at once (ingest/input.h): each
// input on its own thread, or a few threads each when there are more threads
// than inputs, still the table of a one-thread read, in input order. One
// input is damaged: its skips (or, with --strict, the first error in input
// order) are reported the same.
TEST(ParallelParse, SeveralInputsAtOnce) {
  Scratch dir;
  std::vector<std::string> paths;
  for (uint32_t seed = 21; seed <= 25; ++seed) {
    const std::string path = dir.Path(absl::StrCat("host", seed, seed % 2 ? ".json" : ".json.gz"));
    // Different sizes, so inputs finish reading out of order.
    std::string text = RandomTrace(seed, 300 + 700 * static_cast<int>(seed % 3));
    if (seed == 23) text.insert(text.size() / 2, "\"}, {");
    if (seed % 2) {
      Write(path, text);
    } else {
      WriteGzip(path, text);
    }
    paths.push_back(path);
  }
  for (bool strict : {false, true}) {
    const Built one = Build(dir, paths, 1, 0, strict);
    ASSERT_EQ(one.status.ok(), !strict) << one.status;
    if (!strict) {
      ASSERT_EQ(one.meta.inputs_size(), 5);
      ASSERT_GT(one.meta.skipped_counts_size(), 0);
    }
    for (int threads : {2, 3, 5, 8, 12}) {
      for (size_t run : {size_t{0}, size_t{300}}) {
        ExpectSame(one, Build(dir, paths, threads, run, strict),
                   absl::StrCat("5 inputs, threads ", threads, " run ", run, strict ? " strict" : ""));
      }
    }
  }
  // An error in a later input than a clean, slow one: the first input's
  // events are read in full, the error is the one a sequential read reports.
  const std::string bad = dir.Path("bad.json");
  Write(bad, "[{\"ph\":\"X\",\"ts\":\"x\"}");
  const std::vector<std::string> with_bad = {paths[1], bad, paths[2]};
  ExpectSame(Build(dir, with_bad, 1, 0, true), Build(dir, with_bad, 3, 0, true), "a bad second input, strict");
}

TEST(ParallelParse, SharedTraces) {
  const std::vector<std::string> traces = testing::SharedTraces();
  if (traces.empty()) GTEST_SKIP() << "no shared traces at " << TRACETABLE_SHARED_TRACES;
  Scratch dir;
  for (const std::string& path : traces) {
    const Built one = Build(dir, {path}, 1, 0);
    for (size_t run : {size_t{4096}, size_t{0}}) {
      ExpectSame(one, Build(dir, {path}, 2, run), absl::StrCat(path, " run ", run));
    }
  }
  // Several inputs (hosts) of one table.
  ExpectSame(Build(dir, traces, 1, 0), Build(dir, traces, 3, 65536), "all shared traces as one table");
}

// Tiles built by any number of workers, each taking tracks biggest first
// (store/track_pool.h), and read from the main sorter's spilled runs (a
// budget of 64 KiB holds 1,024 records) instead of memory: the same table.
TEST(ParallelTiles, AnyWorkerCountAndSpilledRunsGiveTheSameTable) {
  Scratch dir;
  for (uint32_t seed = 31; seed <= 33; ++seed) {
    const std::string path = dir.Path(absl::StrCat("tiles", seed, ".json"));
    Write(path, RandomTrace(seed, 6000));
    const Built one = Build(dir, {path}, 1, 0, false, 1);
    ASSERT_TRUE(one.status.ok()) << one.status;
    ASSERT_GT(one.meta.num_events(), 5000u);
    for (int tile_threads : {2, 3, 5}) {
      ExpectSame(one, Build(dir, {path}, 1, 0, false, tile_threads),
                 absl::StrCat(path, " tile threads ", tile_threads));
    }
    for (int tile_threads : {1, 2}) {
      ExpectSame(one, Build(dir, {path}, 2, 0, false, tile_threads, 64 << 10),
                 absl::StrCat(path, " spilled, tile threads ", tile_threads));
    }
  }
  const std::vector<std::string> traces = testing::SharedTraces();
  if (traces.empty()) GTEST_SKIP() << "no shared traces at " << TRACETABLE_SHARED_TRACES;
  ExpectSame(Build(dir, traces, 1, 0, false, 1), Build(dir, traces, 1, 0, false, 3),
             "all shared traces as one table, 1 and 3 tile threads");
}

// Damage anywhere: a stray quote, a lost byte, bad UTF-8, a bad time, the
// file cut off. Whatever one thread reports (skips with offsets, or the
// error), several threads report the same.
TEST(ParallelParse, DamagedInputsReportTheSame) {
  Scratch dir;
  std::mt19937 rng(7);
  const std::string clean = RandomTrace(11, 600);
  int skipped = 0, failed = 0;  // the damage was met, not only read past
  for (int trial = 0; trial < 40; ++trial) {
    std::string text = clean;
    for (int d = 0; d < 1 + trial % 3; ++d) {
      const size_t at = 20 + rng() % (text.size() - 40);
      switch (rng() % 6) {
        case 0: text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), '"'); break;
        case 1: text.erase(at, 1); break;
        case 2: text[at] = '\xff'; break;
        case 3: {
          const size_t ts = text.find("\"ts\":", at);
          if (ts != std::string::npos) text.replace(ts + 5, 1, "\"x\"");
          break;
        }
        case 4: text.resize(at); break;
        default: text.insert(at, "}, {"); break;
      }
    }
    const std::string path = dir.Path(absl::StrCat("d", trial, trial % 4 == 3 ? ".json.gz" : ".json"));
    if (trial % 4 == 3) {
      WriteGzip(path, text);
    } else {
      Write(path, text);
    }
    for (bool strict : {false, true}) {
      const Built one = Build(dir, {path}, 1, 0, strict);
      failed += !one.status.ok();
      skipped += one.status.ok() && one.meta.skipped_counts_size() > 0;
      for (size_t run : {size_t{1}, size_t{300}, size_t{5000}}) {
        ExpectSame(one, Build(dir, {path}, 3, run, strict),
                   absl::StrCat("trial ", trial, strict ? " strict" : "", " run ", run));
      }
    }
  }
  EXPECT_GT(skipped, 10);
  EXPECT_GT(failed, 10);
}

// Several inputs at once are told apart by host, named after their files.
TEST(HostFromFileName, DropsOneTraceSuffixThenTrace) {
  EXPECT_EQ(HostFromFileName("/a/b/host1.xplane.pb"), "host1");
  EXPECT_EQ(HostFromFileName("h.trace.json.gz"), "h");
  EXPECT_EQ(HostFromFileName("x.json"), "x");
  EXPECT_EQ(HostFromFileName("y.gz"), "y");
  EXPECT_EQ(HostFromFileName("z.trace"), "z");
  EXPECT_EQ(HostFromFileName("w.json.json"), "w.json");
  EXPECT_EQ(HostFromFileName("plain"), "plain");
  EXPECT_EQ(HostFromFileName(".json"), "");
}

}  // namespace
}  // namespace tracetable
