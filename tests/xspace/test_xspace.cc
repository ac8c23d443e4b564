// Tests for ingest/xspace: the real TensorFlow profile, a synthetic XSpace
// that exercises each mapping rule, and malformed inputs.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"
#include "gtest/gtest.h"
#include "ingest/xspace/reader.h"
#include "ingest/xspace/xplane.pb.h"
#include "simdjson.h"
#include "tests/xspace/collecting_sink.h"

namespace tracetable {
namespace {

using ::testing::HasSubstr;
using testing::CollectingSink;
namespace xs = tracetable::xspace;

const std::string kRealProfile = std::string(TRACETABLE_SHARED_TRACES) +
                                 "/xspace/gpu_multi_worker_host179.xplane.pb";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string TempPath(const std::string& name) {
  static int counter = 0;
  return absl::StrCat(::testing::TempDir(), "/xspace_test_", getpid(), "_",
                      counter++, "_", name);
}

std::string WriteTemp(const std::string& name, const std::string& bytes) {
  const std::string path = TempPath(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// ps of an absolute (ns, ps) time relative to the sink's origin, computed
// independently of the reader.
int64_t Rel(const CollectingSink& sink, __int128 abs_ps) {
  return static_cast<int64_t>(abs_ps - static_cast<__int128>(*sink.origin_ns) * 1000);
}

// Parses args JSON; fails the test if it is not a JSON object.
simdjson::dom::object ParseArgs(simdjson::dom::parser& parser,
                                const std::string& json) {
  simdjson::dom::object obj;
  auto err = parser.parse(json).get(obj);
  EXPECT_EQ(err, simdjson::SUCCESS) << json;
  return obj;
}

// ---------------------------------------------------------------------------
// (1) The real profile
// ---------------------------------------------------------------------------

class RealProfileTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(std::filesystem::exists(kRealProfile)) << kRealProfile;
    // Independent decode of the whole file with the generated classes.
    space_ = new xs::XSpace;
    ASSERT_TRUE(space_->ParseFromString(ReadAll(kRealProfile)));
    sink_ = new CollectingSink;
    status_ = new absl::Status(ReadXSpace(
        kRealProfile, "", sink_, [](uint64_t done, uint64_t total) {
          progress_->emplace_back(done, total);
        }));
  }
  static void TearDownTestSuite() {
    delete space_;
    delete sink_;
    delete status_;
  }

  // The pid rule, restated: plane ids if distinct, else plane indices.
  static std::vector<std::string> ExpectedPids() {
    std::set<int64_t> ids;
    for (const auto& p : space_->planes()) ids.insert(p.id());
    const bool unique = ids.size() == static_cast<size_t>(space_->planes_size());
    std::vector<std::string> pids;
    for (int i = 0; i < space_->planes_size(); ++i) {
      pids.push_back(absl::StrCat(unique ? space_->planes(i).id() : i));
    }
    return pids;
  }

  static xs::XSpace* space_;
  static CollectingSink* sink_;
  static absl::Status* status_;
  static std::vector<std::pair<uint64_t, uint64_t>>* progress_;
};

xs::XSpace* RealProfileTest::space_ = nullptr;
CollectingSink* RealProfileTest::sink_ = nullptr;
absl::Status* RealProfileTest::status_ = nullptr;
std::vector<std::pair<uint64_t, uint64_t>>* RealProfileTest::progress_ =
    new std::vector<std::pair<uint64_t, uint64_t>>;

TEST_F(RealProfileTest, ReadsWithHostFromHostnames) {
  ASSERT_TRUE(status_->ok()) << *status_;
  EXPECT_EQ(sink_->begin_calls, 1);
  EXPECT_EQ(sink_->path, kRealProfile);
  EXPECT_EQ(sink_->host, "34.83.195.179:6003");
  EXPECT_EQ(sink_->input_fields["hostnames"], "[\"34.83.195.179:6003\"]");
}

TEST_F(RealProfileTest, PerPlaneEventCountsMatchFullDecode) {
  ASSERT_TRUE(status_->ok()) << *status_;
  const std::vector<std::string> pids = ExpectedPids();
  std::map<std::string, uint64_t> expected, seen;
  uint64_t host_events = 0, device_events = 0;
  for (int i = 0; i < space_->planes_size(); ++i) {
    const xs::XPlane& plane = space_->planes(i);
    uint64_t n = 0;
    for (const auto& line : plane.lines()) n += line.events_size();
    (absl::StartsWith(plane.name(), "/host:") ? host_events : device_events) += n;
    for (const auto& line : plane.lines()) {
      for (const auto& e : line.events()) {
        if (line.name() != "_counters_" &&
            e.data_case() != xs::XEvent::kNumOccurrences) {
          ++expected[pids[i]];
        }
      }
    }
  }
  // The numbers the shared-traces README states for this file.
  EXPECT_EQ(host_events, 15354u);
  EXPECT_EQ(device_events, 7774u);
  for (const auto& s : sink_->events) {
    if (s.event.kind == EventKind::kSlice) ++seen[sink_->tracks[s.event.track].pid];
  }
  // Only planes with events show up in `seen`; drop zeros from `expected`.
  std::erase_if(expected, [](const auto& kv) { return kv.second == 0; });
  EXPECT_EQ(seen, expected);
}

TEST_F(RealProfileTest, SliceTimesMatchFullDecodeExactly) {
  ASSERT_TRUE(status_->ok()) << *status_;
  ASSERT_TRUE(sink_->origin_ns.has_value());
  const std::vector<std::string> pids = ExpectedPids();
  using Span = std::pair<int64_t, int64_t>;
  std::map<std::string, std::vector<Span>> expected, seen;
  for (int i = 0; i < space_->planes_size(); ++i) {
    for (const auto& line : space_->planes(i).lines()) {
      for (const auto& e : line.events()) {
        const __int128 abs_ps =
            static_cast<__int128>(line.timestamp_ns()) * 1000 + e.offset_ps();
        expected[pids[i]].emplace_back(Rel(*sink_, abs_ps), e.duration_ps());
      }
    }
  }
  for (const auto& s : sink_->events) {
    if (s.event.kind != EventKind::kSlice) continue;
    seen[sink_->tracks[s.event.track].pid].emplace_back(s.event.ts, s.event.dur);
  }
  for (auto& [pid, v] : expected) std::sort(v.begin(), v.end());
  for (auto& [pid, v] : seen) std::sort(v.begin(), v.end());
  std::erase_if(expected, [](const auto& kv) { return kv.second.empty(); });
  EXPECT_EQ(seen, expected);
}

TEST_F(RealProfileTest, ProcessesThreadsAndOrder) {
  ASSERT_TRUE(status_->ok()) << *status_;
  const std::vector<std::string> pids = ExpectedPids();
  ASSERT_EQ(sink_->process_names.size(), pids.size());
  // Host first, then GPUs by number.
  std::vector<std::pair<int64_t, std::string>> order;
  size_t lines = 0;
  for (int i = 0; i < space_->planes_size(); ++i) {
    EXPECT_EQ(sink_->process_names[pids[i]], space_->planes(i).name());
    order.emplace_back(sink_->process_sort.at(pids[i]), space_->planes(i).name());
    lines += space_->planes(i).lines_size();
  }
  std::sort(order.begin(), order.end());
  EXPECT_EQ(order.front().second, "/host:CPU");
  for (size_t k = 1; k < order.size(); ++k) {
    EXPECT_EQ(order[k].second, absl::StrCat("/device:GPU:", k - 1));
  }
  EXPECT_EQ(sink_->thread_names.size(), lines);
  EXPECT_EQ((sink_->thread_names[{pids[0], "1630881670"}]), "python3");
}

TEST_F(RealProfileTest, ArgsAreValidJsonAndRefsResolved) {
  ASSERT_TRUE(status_->ok()) << *status_;
  simdjson::dom::parser parser;
  size_t with_args = 0;
  for (const auto& s : sink_->events) {
    if (s.args.empty()) continue;
    ++with_args;
    simdjson::dom::element doc;
    ASSERT_EQ(parser.parse(s.args).get(doc), simdjson::SUCCESS) << s.args;
    ASSERT_TRUE(doc.is_object());
    EXPECT_TRUE(s.event.flags & kFlagHasArgs);
  }
  EXPECT_GT(with_args, 10000u);
  // ref_value stats resolve to names, never to "<ref N>".
  for (const auto& s : sink_->events) EXPECT_THAT(s.args, ::testing::Not(HasSubstr("<ref ")));
}

TEST_F(RealProfileTest, ProgressIsMonotonicAndComplete) {
  ASSERT_TRUE(status_->ok()) << *status_;
  ASSERT_FALSE(progress_->empty());
  const uint64_t size = std::filesystem::file_size(kRealProfile);
  uint64_t last = 0;
  for (const auto& [done, total] : *progress_) {
    EXPECT_EQ(total, size);
    EXPECT_GE(done, last);
    last = done;
  }
  EXPECT_EQ(last, size);
}

// ---------------------------------------------------------------------------
// (2) Synthetic XSpace: one rule per assertion
// ---------------------------------------------------------------------------

enum StatId : int64_t {
  kStepName = 1, kFlow = 2, kGroupId = 3, kKernelName = 4, kRefTarget = 5,
  kBytes = 6, kRatio = 7, kMemory = 8, kUnsigned = 9, kTfOp = 10, kSigned = 11,
  kLabel = 12,
};
constexpr int64_t kBaseNs = 1'000'000'000'000;  // line 0 timestamp_ns

uint64_t FlowValue(uint64_t direction, uint64_t id, uint64_t category) {
  return direction | (id << 2) | (category << 58);
}

xs::XStat* AddStat(google::protobuf::RepeatedPtrField<xs::XStat>* stats,
                   int64_t id) {
  xs::XStat* s = stats->Add();
  s->set_metadata_id(id);
  return s;
}

xs::XEvent* AddEvent(xs::XLine* line, int64_t md, int64_t offset_ps,
                     int64_t dur_ps) {
  xs::XEvent* e = line->add_events();
  e->set_metadata_id(md);
  e->set_offset_ps(offset_ps);
  e->set_duration_ps(dur_ps);
  return e;
}

xs::XSpace SyntheticSpace() {
  xs::XSpace space;
  space.add_hostnames("synthetic-host");
  space.add_errors("e1");
  space.add_warnings("w1");

  xs::XPlane* host = space.add_planes();
  host->set_id(7);
  host->set_name("/host:CPU");
  const std::pair<int64_t, const char*> stat_names[] = {
      {kStepName, "step_name"}, {kFlow, "flow"}, {kGroupId, "group_id"},
      {kKernelName, "kernel_name"}, {kRefTarget, "MatMul:MatMul"},
      {kBytes, "blob"}, {kRatio, "ratio"}, {kMemory, "memory"},
      {kUnsigned, "unsigned"}, {kTfOp, "tf_op"}, {kSigned, "signed"},
      {kLabel, "label"}};
  for (auto [id, name] : stat_names) {
    auto& md = (*host->mutable_stat_metadata())[id];
    md.set_id(id);
    md.set_name(name);
  }
  auto& matmul = (*host->mutable_event_metadata())[100];
  matmul.set_id(100);
  matmul.set_name("very/long/scope/MatMul");
  matmul.set_display_name("MatMul");
  AddStat(matmul.mutable_stats(), kKernelName)->set_str_value("k\"q\n\x01");
  AddStat(matmul.mutable_stats(), kGroupId)->set_int64_value(1);  // overridden
  (*host->mutable_event_metadata())[101].set_name("plain");
  (*host->mutable_event_metadata())[102].set_name("StepMarker");
  (*host->mutable_event_metadata())[103].set_name("HBM");
  AddStat(host->mutable_stats(), kRatio)->set_double_value(2.5);

  // Line 0: slices with every stat type, a flow start and a flow step.
  xs::XLine* l0 = host->add_lines();
  l0->set_id(11);
  l0->set_name("tf_Compute/11");
  l0->set_timestamp_ns(kBaseNs);
  xs::XEvent* e0 = AddEvent(l0, 100, 1'234'567, 890'123);
  AddStat(e0->mutable_stats(), kTfOp)->set_ref_value(kRefTarget);
  AddStat(e0->mutable_stats(), kRatio)->set_double_value(0.1);
  AddStat(e0->mutable_stats(), kUnsigned)->set_uint64_value(UINT64_MAX);
  AddStat(e0->mutable_stats(), kSigned)->set_int64_value(-5);
  AddStat(e0->mutable_stats(), kBytes)->set_bytes_value(std::string("\x00\xff", 2));
  AddStat(e0->mutable_stats(), kGroupId)->set_int64_value(42);
  AddStat(e0->mutable_stats(), kFlow)->set_uint64_value(FlowValue(2, 77, 3));
  xs::XEvent* e1 = AddEvent(l0, 101, -1, 5);  // 1 ps before the line start
  AddStat(e1->mutable_stats(), kFlow)->set_uint64_value(FlowValue(3, 77, 3));
  xs::XEvent* e2 = AddEvent(l0, 102, 3'000'000, 0);
  AddStat(e2->mutable_stats(), kStepName)->set_str_value("step 12");
  xs::XEvent* agg = l0->add_events();
  agg->set_metadata_id(101);
  agg->set_num_occurrences(9);
  xs::XEvent* e4 = AddEvent(l0, 999, 4'000'000, 1);  // no such metadata
  AddStat(e4->mutable_stats(), 555)->set_int64_value(3);  // no such stat

  // Line 1: display id / name, another timestamp, the flow's end.
  xs::XLine* l1 = host->add_lines();
  l1->set_id(12);
  l1->set_display_id(21);
  l1->set_name("tf_Compute/12");
  l1->set_display_name("Compute thread");
  l1->set_timestamp_ns(kBaseNs + 500);
  xs::XEvent* e5 = AddEvent(l1, 101, 10'001, 2'000);
  AddStat(e5->mutable_stats(), kFlow)->set_uint64_value(FlowValue(1, 77, 3));

  // Line 2: counters. The first numeric stat is the value.
  xs::XLine* l2 = host->add_lines();
  l2->set_id(13);
  l2->set_name("_counters_");
  l2->set_timestamp_ns(kBaseNs + 1000);
  xs::XEvent* c0 = AddEvent(l2, 103, 0, 0);
  AddStat(c0->mutable_stats(), kLabel)->set_str_value("not a number");
  AddStat(c0->mutable_stats(), kMemory)->set_int64_value(4096);
  xs::XEvent* c1 = AddEvent(l2, 103, 2'000, 0);
  AddStat(c1->mutable_stats(), kMemory)->set_double_value(1.5);
  xs::XEvent* c2 = AddEvent(l2, 103, 3'000, 0);
  AddStat(c2->mutable_stats(), kLabel)->set_str_value("no value");

  // Line 3: no events.
  xs::XLine* l3 = host->add_lines();
  l3->set_id(14);
  l3->set_name("idle");

  // Two device planes, listed out of device order; one has no lines.
  xs::XPlane* gpu1 = space.add_planes();
  gpu1->set_id(3);
  gpu1->set_name("/device:GPU:1");
  (*gpu1->mutable_event_metadata())[1].set_name("kernel");
  xs::XLine* g = gpu1->add_lines();
  g->set_id(1);
  g->set_name("Stream #1");
  g->set_timestamp_ns(2 * kBaseNs);
  AddEvent(g, 1, 7, 3);
  xs::XPlane* gpu0 = space.add_planes();
  gpu0->set_id(4);
  gpu0->set_name("/device:GPU:0");
  return space;
}

class SyntheticTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string bytes = SyntheticSpace().SerializeAsString();
    size_ = bytes.size();
    path_ = WriteTemp("synthetic.xplane.pb", bytes);
    status_ = ReadXSpace(path_, "", &sink_, [&](uint64_t done, uint64_t total) {
      progress_.emplace_back(done, total);
    });
    ASSERT_TRUE(status_.ok()) << status_;
    for (const auto& s : sink_.events) by_name_[s.name].push_back(&s);
  }
  void TearDown() override { std::remove(path_.c_str()); }

  const CollectingSink::Stored& One(const std::string& name, EventKind kind) {
    const CollectingSink::Stored* found = nullptr;
    for (const auto& s : sink_.events) {
      if (s.name == name && s.event.kind == kind) {
        EXPECT_EQ(found, nullptr) << "two events named " << name;
        found = &s;
      }
    }
    EXPECT_NE(found, nullptr) << name;
    static const CollectingSink::Stored kNone;
    return found ? *found : kNone;
  }
  const CollectingSink::Track& TrackOf(const CollectingSink::Stored& s) {
    return sink_.tracks.at(s.event.track);
  }

  std::string path_;
  uint64_t size_ = 0;
  absl::Status status_;
  CollectingSink sink_;
  std::vector<std::pair<uint64_t, uint64_t>> progress_;
  std::map<std::string, std::vector<const CollectingSink::Stored*>> by_name_;
};

TEST_F(SyntheticTest, HostProcessesAndThreads) {
  EXPECT_EQ(sink_.host, "synthetic-host");
  EXPECT_EQ(sink_.input_fields["hostnames"], "[\"synthetic-host\"]");
  EXPECT_EQ(sink_.process_names["7"], "/host:CPU");
  EXPECT_EQ(sink_.process_names["3"], "/device:GPU:1");
  EXPECT_EQ(sink_.process_names["4"], "/device:GPU:0");
  EXPECT_LT(sink_.process_sort["7"], sink_.process_sort["4"]);
  EXPECT_LT(sink_.process_sort["4"], sink_.process_sort["3"]);
  // tid = display_id if set; thread name = display_name if set.
  EXPECT_EQ((sink_.thread_names[{"7", "11"}]), "tf_Compute/11");
  EXPECT_EQ((sink_.thread_names[{"7", "21"}]), "Compute thread");
  EXPECT_EQ((sink_.thread_names[{"7", "14"}]), "idle");
  EXPECT_EQ((sink_.thread_sort[{"7", "11"}]), 0);
  EXPECT_EQ((sink_.thread_sort[{"7", "21"}]), 1);
  EXPECT_EQ((sink_.thread_sort[{"7", "14"}]), 3);
  EXPECT_FALSE(sink_.thread_names.contains({"7", "13"}));  // _counters_
  EXPECT_EQ(sink_.thread_names.size(), 4u);
}

TEST_F(SyntheticTest, PicosecondTimesAcrossLinesAndPlanes) {
  const auto& e0 = One("MatMul", EventKind::kSlice);
  EXPECT_EQ(e0.event.ts, Rel(sink_, __int128{kBaseNs} * 1000 + 1'234'567));
  EXPECT_EQ(e0.event.dur, 890'123);
  // Negative sub-ns offset: floor division, not truncation.
  int64_t e1_ts = INT64_MIN, e5_ts = INT64_MIN;
  for (const auto* s : by_name_["plain"]) {
    if (s->event.kind != EventKind::kSlice) continue;  // flows share the name
    if (TrackOf(*s).tid == "11") e1_ts = s->event.ts;
    if (TrackOf(*s).tid == "21") e5_ts = s->event.ts;
  }
  EXPECT_EQ(e1_ts, Rel(sink_, __int128{kBaseNs} * 1000 - 1));
  EXPECT_EQ(e5_ts, Rel(sink_, (__int128{kBaseNs} + 500) * 1000 + 10'001));
  const auto& kernel = One("kernel", EventKind::kSlice);
  EXPECT_EQ(kernel.event.ts, Rel(sink_, __int128{2 * kBaseNs} * 1000 + 7));
  EXPECT_EQ(kernel.event.dur, 3);
  EXPECT_EQ(TrackOf(kernel).pid, "3");
  EXPECT_EQ(TrackOf(kernel).tid, "1");
}

TEST_F(SyntheticTest, NamesDisplayNameLongNameAndStepName) {
  const auto& e0 = One("MatMul", EventKind::kSlice);
  simdjson::dom::parser parser;
  auto args = ParseArgs(parser, e0.args);
  EXPECT_EQ(std::string_view(args["long_name"].get_string().value()),
            "very/long/scope/MatMul");
  EXPECT_EQ(e0.cat, "tf_Compute/11");
  const auto& step = One("step 12", EventKind::kSlice);
  EXPECT_THAT(step.args, HasSubstr("\"step_name\":\"step 12\""));
  EXPECT_TRUE(by_name_["StepMarker"].empty());
  const auto& missing = One("<event metadata 999>", EventKind::kSlice);
  EXPECT_THAT(missing.args, HasSubstr("\"stat#555\":3"));
  EXPECT_THAT(sink_.warnings, ::testing::Contains(HasSubstr("missing event metadata")));
}

TEST_F(SyntheticTest, StatValuesBecomeJsonArgs) {
  const auto& e0 = One("MatMul", EventKind::kSlice);
  EXPECT_TRUE(e0.event.flags & kFlagHasArgs);
  simdjson::dom::parser parser;
  auto args = ParseArgs(parser, e0.args);
  EXPECT_EQ(std::string_view(args["tf_op"].get_string().value()), "MatMul:MatMul");
  EXPECT_EQ(args["ratio"].get_double().value(), 0.1);  // round trip, exact
  EXPECT_EQ(args["unsigned"].get_uint64().value(), UINT64_MAX);
  EXPECT_EQ(args["signed"].get_int64().value(), -5);
  EXPECT_EQ(std::string_view(args["blob"].get_string().value()), "base64:AP8=");
  EXPECT_EQ(std::string_view(args["kernel_name"].get_string().value()), "k\"q\n\x01");
  EXPECT_EQ(args["group_id"].get_int64().value(), 42);  // event beats metadata
  EXPECT_EQ(args["flow"].get_uint64().value(), FlowValue(2, 77, 3));
  size_t group_ids = 0;
  for (auto field : args) group_ids += field.key == "group_id";
  EXPECT_EQ(group_ids, 1u);
  EXPECT_EQ(sink_.input_fields["xspace_plane_stats"],
            "{\"/host:CPU\":{\"ratio\":2.5}}");
}

TEST_F(SyntheticTest, FlowsInAllDirectionsBindToTheirSlices) {
  std::vector<const CollectingSink::Stored*> flows;
  for (const auto& s : sink_.events) {
    if (s.event.kind == EventKind::kFlowStart ||
        s.event.kind == EventKind::kFlowStep || s.event.kind == EventKind::kFlowEnd) {
      flows.push_back(&s);
    }
  }
  ASSERT_EQ(flows.size(), 3u);
  std::map<EventKind, const CollectingSink::Stored*> by_kind;
  for (const auto* f : flows) {
    by_kind[f->event.kind] = f;
    EXPECT_EQ(f->flow_id, "77");
    EXPECT_EQ(f->event.flags, static_cast<uint32_t>(kFlagBindEnclosing));
    EXPECT_EQ(f->cat, flows[0]->cat);
    EXPECT_EQ(f->event.dur, 0);
  }
  const auto& e0 = One("MatMul", EventKind::kSlice);
  ASSERT_TRUE(by_kind.contains(EventKind::kFlowStart));
  ASSERT_TRUE(by_kind.contains(EventKind::kFlowStep));
  ASSERT_TRUE(by_kind.contains(EventKind::kFlowEnd));
  EXPECT_EQ(by_kind[EventKind::kFlowStart]->event.ts, e0.event.ts);
  EXPECT_EQ(by_kind[EventKind::kFlowStart]->event.track, e0.event.track);
  EXPECT_EQ(by_kind[EventKind::kFlowStep]->event.ts,
            Rel(sink_, __int128{kBaseNs} * 1000 - 1));
  EXPECT_EQ(TrackOf(*by_kind[EventKind::kFlowEnd]).tid, "21");
  EXPECT_EQ(by_kind[EventKind::kFlowEnd]->event.ts,
            Rel(sink_, (__int128{kBaseNs} + 500) * 1000 + 10'001));
}

TEST_F(SyntheticTest, CountersLineGivesCounterSamples) {
  std::vector<const CollectingSink::Stored*> samples;
  for (const auto& s : sink_.events) {
    if (s.event.kind == EventKind::kCounter) samples.push_back(&s);
  }
  ASSERT_EQ(samples.size(), 2u);
  for (const auto* s : samples) {
    const auto& track = TrackOf(*s);
    EXPECT_TRUE(track.is_counter);
    EXPECT_EQ(track.pid, "7");
    EXPECT_EQ(track.counter, "HBM");
    EXPECT_EQ(track.series, "memory");
    EXPECT_EQ(s->name, "memory");
  }
  EXPECT_EQ(samples[0]->event.value, 4096);
  EXPECT_EQ(samples[0]->event.ts, Rel(sink_, (__int128{kBaseNs} + 1000) * 1000));
  EXPECT_EQ(samples[1]->event.value, 1.5);
  EXPECT_EQ(samples[1]->event.ts, Rel(sink_, (__int128{kBaseNs} + 1000) * 1000 + 2000));
  EXPECT_EQ(sink_.skipped["xspace counter sample without a numeric stat"], 1u);
}

TEST_F(SyntheticTest, SkipsAndWarningsAreReported) {
  EXPECT_EQ(sink_.skipped["xspace aggregated event"], 1u);
  EXPECT_THAT(sink_.warnings, ::testing::Contains("xspace error: e1"));
  EXPECT_THAT(sink_.warnings, ::testing::Contains("xspace warning: w1"));
  size_t slices = 0;
  for (const auto& s : sink_.events) slices += s.event.kind == EventKind::kSlice;
  EXPECT_EQ(slices, 6u);  // e0, e1, e2, e4, e5, kernel
  ASSERT_FALSE(progress_.empty());
  EXPECT_EQ(progress_.back(), std::make_pair(size_, size_));
}

TEST(XSpaceHostTest, ExplicitHostWinsElseFileStem) {
  xs::XSpace space = SyntheticSpace();
  const std::string with_hosts = WriteTemp("a.xplane.pb", space.SerializeAsString());
  CollectingSink explicit_host;
  ASSERT_TRUE(ReadXSpace(with_hosts, "given", &explicit_host).ok());
  EXPECT_EQ(explicit_host.host, "given");
  space.clear_hostnames();
  const std::string no_hosts = TempPath("worker7.xplane.pb");
  std::ofstream(no_hosts, std::ios::binary) << space.SerializeAsString();
  CollectingSink stem;
  ASSERT_TRUE(ReadXSpace(no_hosts, "", &stem).ok());
  EXPECT_TRUE(absl::EndsWith(stem.host, "worker7")) << stem.host;
  EXPECT_FALSE(stem.input_fields.contains("hostnames"));
  std::remove(with_hosts.c_str());
  std::remove(no_hosts.c_str());
}

TEST(XSpacePidTest, CollidingPlaneIdsUsePlaneIndex) {
  xs::XSpace space;
  for (const char* name : {"/host:CPU", "/device:GPU:0", "/device:GPU:1"}) {
    xs::XPlane* p = space.add_planes();  // id 0 for all
    p->set_name(name);
    (*p->mutable_event_metadata())[1].set_name("op");
    xs::XLine* l = p->add_lines();
    l->set_id(5);
    l->set_timestamp_ns(100);
    AddEvent(l, 1, 0, 1);
  }
  const std::string path = WriteTemp("ids.xplane.pb", space.SerializeAsString());
  CollectingSink sink;
  ASSERT_TRUE(ReadXSpace(path, "", &sink).ok());
  EXPECT_EQ(sink.process_names["0"], "/host:CPU");
  EXPECT_EQ(sink.process_names["1"], "/device:GPU:0");
  EXPECT_EQ(sink.process_names["2"], "/device:GPU:1");
  std::set<std::string> pids;
  for (const auto& s : sink.events) pids.insert(sink.tracks[s.event.track].pid);
  EXPECT_EQ(pids, (std::set<std::string>{"0", "1", "2"}));
  std::remove(path.c_str());
}

TEST(XSpaceSinkTest, AddFailureStopsTheRead) {
  CollectingSink sink;
  sink.fail_after = 10;
  const absl::Status s = ReadXSpace(kRealProfile, "", &sink);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_EQ(sink.events.size(), 10u);
}

// ---------------------------------------------------------------------------
// (3) Bad input
// ---------------------------------------------------------------------------

void ExpectDecodeError(const std::string& path, const std::string& what) {
  CollectingSink sink;
  const absl::Status s = ReadXSpace(path, "", &sink);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << what << ": " << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr(path)) << what;
  EXPECT_THAT(std::string(s.message()), HasSubstr("byte offset")) << what;
}

TEST(XSpaceBadInputTest, TruncatedRealFile) {
  const std::string bytes = ReadAll(kRealProfile);
  ASSERT_GT(bytes.size(), 1000u);
  for (size_t cut : {size_t{1}, size_t{2}, size_t{5}, size_t{100}, size_t{4096},
                     bytes.size() / 3, bytes.size() / 2, bytes.size() * 9 / 10,
                     bytes.size() - 1}) {
    const std::string path = WriteTemp("cut.xplane.pb", bytes.substr(0, cut));
    ExpectDecodeError(path, absl::StrCat("cut at ", cut));
    CollectingSink sink;
    (void)ReadXSpace(path, "", &sink);
    // Truncation is found by the scan, before anything reaches the sink.
    EXPECT_EQ(sink.begin_calls, 0) << "cut at " << cut;
    std::remove(path.c_str());
  }
}

TEST(XSpaceBadInputTest, TruncatedSyntheticFileAtEveryByte) {
  const std::string bytes = SyntheticSpace().SerializeAsString();
  // Cutting between two top-level fields leaves a valid (shorter) XSpace;
  // every other cut must be an error, and none may crash.
  std::set<size_t> boundaries;
  {
    google::protobuf::io::CodedInputStream in(
        reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    while (true) {
      boundaries.insert(in.CurrentPosition());
      const uint32_t tag = in.ReadTag();
      if (tag == 0) break;
      ASSERT_TRUE(google::protobuf::internal::WireFormatLite::SkipField(&in, tag));
    }
  }
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    const std::string path = WriteTemp("cut.xplane.pb", bytes.substr(0, cut));
    CollectingSink sink;
    const absl::Status s = ReadXSpace(path, "", &sink);
    if (cut == 0 || !boundaries.contains(cut)) {
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << "cut " << cut;
      EXPECT_THAT(std::string(s.message()), HasSubstr(path));
    } else {
      EXPECT_TRUE(s.ok()) << "cut " << cut << ": " << s;
    }
    std::remove(path.c_str());
  }
}

TEST(XSpaceBadInputTest, RandomBytes) {
  for (uint32_t seed : {1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u}) {
    std::mt19937 rng(seed);
    std::string bytes(4096, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    const std::string path = WriteTemp("random.xplane.pb", bytes);
    ExpectDecodeError(path, absl::StrCat("seed ", seed));
    std::remove(path.c_str());
  }
}

TEST(XSpaceBadInputTest, JsonFile) {
  const std::string path = WriteTemp(
      "trace.json", "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,\"dur\":2}]}\n");
  ExpectDecodeError(path, "json");
  std::remove(path.c_str());
  // And a real JSON trace someone might pass by mistake.
  for (const auto& entry : std::filesystem::directory_iterator(
           std::string(TRACETABLE_SHARED_TRACES) + "/catapult")) {
    if (entry.path().extension() == ".json") {
      ExpectDecodeError(entry.path().string(), entry.path().string());
      break;
    }
  }
}

TEST(XSpaceBadInputTest, EmptyAndMissingFiles) {
  const std::string path = WriteTemp("empty.xplane.pb", "");
  ExpectDecodeError(path, "empty");
  std::remove(path.c_str());
  CollectingSink sink;
  const absl::Status missing = ReadXSpace("/nonexistent/x.xplane.pb", "", &sink);
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.message()), HasSubstr("/nonexistent/x.xplane.pb"));
  const absl::Status dir = ReadXSpace(::testing::TempDir(), "", &sink);
  EXPECT_EQ(dir.code(), absl::StatusCode::kInvalidArgument);
}

// The offset in "... at byte offset N" of a decode error.
uint64_t ErrorOffset(const absl::Status& s) {
  const std::string msg(s.message());
  const size_t at = msg.rfind("byte offset ");
  EXPECT_NE(at, std::string::npos) << msg;
  return at == std::string::npos ? 0 : std::stoull(msg.substr(at + 12));
}

TEST(XSpaceBadInputTest, CorruptBytesInsideAPlane) {
  std::string bytes = ReadAll(kRealProfile);
  for (size_t at : {bytes.size() / 4, bytes.size() / 2, bytes.size() * 3 / 4}) {
    std::string broken = bytes;
    std::fill(broken.begin() + at, broken.begin() + at + 64, '\xff');
    const std::string path = WriteTemp("corrupt.xplane.pb", broken);
    ExpectDecodeError(path, absl::StrCat("0xff at ", at));
    CollectingSink sink;
    const uint64_t offset = ErrorOffset(ReadXSpace(path, "", &sink));
    // Bytes before `at` are intact, so the fault is found in the field that
    // holds the damage: at most one op-name-sized string before it.
    EXPECT_LE(offset, at + 64);
    EXPECT_GE(offset + 1024, at);
    std::remove(path.c_str());
  }
}

TEST(XSpaceBadInputTest, NonUtf8StringIsLocatedExactly) {
  std::string bytes = SyntheticSpace().SerializeAsString();
  const size_t name_at = bytes.find("Compute thread");
  ASSERT_NE(name_at, std::string::npos);
  bytes[name_at + 3] = '\xff';
  const std::string path = WriteTemp("utf8.xplane.pb", bytes);
  CollectingSink sink;
  const absl::Status s = ReadXSpace(path, "", &sink);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("display_name is not UTF-8"));
  EXPECT_EQ(ErrorOffset(s), name_at);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace tracetable
