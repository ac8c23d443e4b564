// Every real trace in shared/traces (catapult, speedscope, kineto) must read
// without error, with the number of events checked against an independent
// count made by parsing the whole file with simdjson's DOM parser.
#include <simdjson.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ingest/chrome_json/reader.h"
#include "tests/chrome_json/collecting_sink.h"
#include "tests/chrome_json/test_util.h"

namespace tracetable::testing_sink {
namespace {

namespace fs = std::filesystem;

struct Expected {
  uint64_t adds = 0;                          // sink->Add calls
  std::map<std::string, uint64_t> skipped;    // "phase 'P'" -> count
  uint64_t process_names = 0;                 // distinct pids named
  bool truncated = false;
};

// Files cut by their tracer are not valid JSON; close them for the oracle.
std::string CloseTruncatedArray(std::string text) {
  while (!text.empty() && (std::isspace(static_cast<unsigned char>(text.back())) ||
                           text.back() == ',')) {
    text.pop_back();
  }
  return text + "]";
}

// The reader's mapping restated over a DOM: which events become Add calls.
Expected CountWithDom(const std::string& path) {
  std::string text = ReadAll(path);
  if (text.size() >= 2 && text[0] == '\x1f' && text[1] == '\x8b') text = Gunzip(text);
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  Expected exp;
  if (parser.parse(text).get(root) != simdjson::SUCCESS) {
    exp.truncated = true;
    EXPECT_EQ(parser.parse(CloseTruncatedArray(text)).get(root), simdjson::SUCCESS) << path;
  }
  simdjson::dom::array events;
  if (root.is_array()) {
    events = root.get_array().value();
  } else {
    EXPECT_EQ(root["traceEvents"].get_array().get(events), simdjson::SUCCESS);
  }
  const std::set<std::string> simple = {"X", "B", "E", "i", "I", "R"};
  const std::set<std::string> with_id = {"s", "t", "f", "b", "n", "e", "S", "T", "p", "F"};
  std::set<std::string> named;
  for (simdjson::dom::element ev : events) {
    std::string_view ph;
    if (ev["ph"].get_string().get(ph) != simdjson::SUCCESS) {
      ++exp.skipped["event without ph"];
      continue;
    }
    std::string p(ph);
    if (p == "M") {
      std::string_view name, arg;
      if (ev["name"].get(name) == simdjson::SUCCESS && name == "process_name" &&
          ev["args"]["name"].get(arg) == simdjson::SUCCESS) {
        named.insert(simdjson::to_string(ev["pid"]));
      }
      continue;
    }
    simdjson::dom::element ts;
    if (ev["ts"].get(ts) != simdjson::SUCCESS || ts.is_null()) {
      ++exp.skipped["phase '" + p + "' without ts"];
      continue;
    }
    simdjson::dom::element unused;
    bool has_id = ev["id"].get(unused) == simdjson::SUCCESS ||
                  ev["id2"].get(unused) == simdjson::SUCCESS;
    if (simple.count(p)) {
      ++exp.adds;
    } else if (with_id.count(p)) {
      if (has_id) ++exp.adds;
    } else if (p == "C") {
      simdjson::dom::object args;
      if (ev["args"].get(args) == simdjson::SUCCESS) {
        for (auto kv : args) {
          if (kv.value.is_number()) ++exp.adds;
        }
      }
    } else {
      ++exp.skipped["phase '" + p + "'"];
    }
  }
  exp.process_names = named.size();
  return exp;
}

std::vector<std::string> SharedTraceFiles() {
  std::vector<std::string> files;
  for (const char* dir : {"catapult", "speedscope", "kineto"}) {
    fs::path d = fs::path(TRACETABLE_SHARED_TRACES) / dir;
    if (!fs::exists(d)) continue;
    for (const auto& entry : fs::directory_iterator(d)) {
      if (entry.is_regular_file()) files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(ChromeJsonSharedTraces, AllFilesReadWithIndependentlyCheckedCounts) {
  std::vector<std::string> files = SharedTraceFiles();
  ASSERT_GE(files.size(), 25u) << "shared traces missing under " << TRACETABLE_SHARED_TRACES;
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    CollectingSink sink;
    absl::Status s = ReadChromeJson(path, "", &sink);
    ASSERT_TRUE(s.ok()) << s;
    Expected exp = CountWithDom(path);
    EXPECT_GT(sink.events.size(), 0u);
    EXPECT_EQ(sink.events.size(), exp.adds);
    for (const auto& [reason, n] : exp.skipped) EXPECT_EQ(sink.skipped[reason], n) << reason;
    EXPECT_EQ(sink.process_names.size(), exp.process_names);
    // Every args text handed over is exactly one JSON object.
    simdjson::dom::parser args_parser;
    for (const Collected& c : sink.events) {
      if (c.args.empty()) continue;
      simdjson::dom::object obj;
      ASSERT_EQ(args_parser.parse(c.args).get(obj), simdjson::SUCCESS) << c.args;
    }
    // A truncated file is reported as such, and only then.
    bool warned_truncated = false;
    for (const auto& w : sink.warnings) warned_truncated |= w.find("truncated") != std::string::npos;
    EXPECT_EQ(warned_truncated, exp.truncated);
  }
}

TEST(ChromeJsonSharedTraces, NanosecondDisplayUnitKeepsMicroseconds) {
  CollectingSink sink;
  ASSERT_TRUE(ReadChromeJson(std::string(TRACETABLE_SHARED_TRACES) + "/catapult/nanoseconds.json",
                             "", &sink).ok());
  ASSERT_EQ(sink.events.size(), 16u);
  // {"name":"ns1","ph":"E","ts":3.011}: 3.011 us, as catapult reads it.
  EXPECT_EQ(sink.events[9].name, "ns1");
  EXPECT_TRUE(sink.AbsPs(sink.events[9].event.ts) == 3011000);
  EXPECT_EQ(sink.fields["displayTimeUnit"], "\"ns\"");
}

TEST(ChromeJsonSharedTraces, SpeedscopePartialFilesKeepAllSixEvents) {
  for (const char* name : {"simple-partial.json", "simple-partial-trailing-comma.json",
                           "simple-partial-whitespace.json"}) {
    SCOPED_TRACE(name);
    CollectingSink sink;
    ASSERT_TRUE(ReadChromeJson(std::string(TRACETABLE_SHARED_TRACES) + "/speedscope/" + name,
                               "", &sink).ok());
    ASSERT_EQ(sink.events.size(), 6u);
    EXPECT_EQ(sink.events[2].name, "gamma");
    EXPECT_EQ(sink.events[2].args, R"({"detail": "foobar"})");
    EXPECT_EQ(sink.events[5].event.kind, EventKind::kEnd);
    // Nothing is dropped: epsilon's thread time is kept.
    EXPECT_EQ(sink.SkippedTotal(), 0u);
  }
}

TEST(ChromeJsonSharedTraces, FuchsiaKeepsSystemTraceEventsRaw) {
  CollectingSink sink;
  ASSERT_TRUE(ReadChromeJson(std::string(TRACETABLE_SHARED_TRACES) +
                                 "/catapult/fuchsia_trace.json.gz", "", &sink).ok());
  ASSERT_EQ(sink.fields.count("systemTraceEvents"), 1u);
  EXPECT_EQ(sink.fields["systemTraceEvents"].front(), '{');
  EXPECT_EQ(sink.skipped["systemTraceEvents (not parsed into events)"], 1u);
}

TEST(ChromeJsonSharedTraces, KinetoStringPidsAndFlows) {
  CollectingSink sink;
  ASSERT_TRUE(ReadChromeJson(std::string(TRACETABLE_SHARED_TRACES) +
                                 "/kineto/sampled_rank-0.json.gz", "", &sink).ok());
  bool string_pid = false;
  for (const auto& t : sink.tracks) string_pid |= t.rfind("thread s:", 0) == 0;
  EXPECT_TRUE(string_pid);
  EXPECT_EQ(sink.fields.count("schemaVersion"), 1u);
}

}  // namespace
}  // namespace tracetable::testing_sink
