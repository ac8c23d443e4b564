// The fixed-origin build option (BuildOptions::origin_ns): shards of a run
// share the run's time base, and an input too far from it is shifted as
// later inputs of one table are.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ingest/input.h"
#include "ingest/origin_probe.h"
#include "store/table.h"
#include "store/table_builder.h"

namespace tracetable {
namespace {
namespace fs = std::filesystem;

class FixedOrigin : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / absl::StrCat("fixed_origin_", ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    input_ = (dir_ / "h.json").string();
    // ts in us: first event at 1000 us = 1,000,000 ns; a B/E pair draws two ids.
    std::ofstream(input_) << R"({"traceEvents":[
      {"ph":"X","ts":1000,"dur":5,"pid":1,"tid":1,"name":"a"},
      {"ph":"B","ts":1002,"pid":1,"tid":2,"name":"b"},
      {"ph":"E","ts":1004,"pid":1,"tid":2},
      {"ph":"i","ts":1010,"pid":1,"tid":1,"name":"c","s":"t"}]})";
  }
  void TearDown() override { fs::remove_all(dir_); }

  absl::StatusOr<std::unique_ptr<Table>> Build(std::optional<int64_t> origin, const std::string& name) {
    BuildOptions options;
    options.output = (dir_ / name).string();
    options.origin_ns = origin;
    absl::StatusOr<std::unique_ptr<TableBuilder>> b = TableBuilder::Create(options);
    if (!b.ok()) return b.status();
    absl::StatusOr<std::vector<InputFile>> inputs = ExpandInputs({input_});
    if (!inputs.ok()) return inputs.status();
    if (absl::Status s = ReadInputs(*inputs, b->get(), nullptr); !s.ok()) return s;
    if (absl::Status s = (*b)->Finish(); !s.ok()) return s;
    return Table::Open(options.output);
  }

  fs::path dir_;
  std::string input_;
};

TEST_F(FixedOrigin, FirstTimestampIsTheDefaultOrigin) {
  absl::StatusOr<std::unique_ptr<Table>> t = Build(std::nullopt, "natural.tracetable");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)->meta().origin_ns(), 1000000);
  EXPECT_EQ((*t)->meta().min_ts(), 0);
  EXPECT_EQ((*t)->meta().max_end(), 10000000);  // 10 us after the origin, in ps
  EXPECT_EQ((*t)->meta().num_events(), 3u);
  EXPECT_EQ((*t)->meta().event_ids(), 4u);  // the E drew an id too
}

TEST_F(FixedOrigin, ProbeFindsTheOriginAnIngestWouldTake) {
  absl::StatusOr<std::vector<InputFile>> inputs = ExpandInputs({input_});
  ASSERT_TRUE(inputs.ok());
  absl::StatusOr<int64_t> origin = FirstTimestampNs((*inputs)[0]);
  ASSERT_TRUE(origin.ok()) << origin.status();
  EXPECT_EQ(*origin, 1000000);
  const std::string empty = (dir_ / "empty.json").string();
  std::ofstream(empty) << R"({"traceEvents":[{"ph":"M","pid":1,"name":"process_name","args":{"name":"p"}}]})";
  inputs = ExpandInputs({empty});
  ASSERT_TRUE(inputs.ok());
  EXPECT_TRUE(absl::IsNotFound(FirstTimestampNs((*inputs)[0]).status()));
}

TEST_F(FixedOrigin, ProbeAgreesWithIngestOnRealTraces) {
  const std::string shared = TRACETABLE_SHARED_TRACES;
  for (const std::string& path : {shared + "/xspace/gpu_multi_worker_host179.xplane.pb",
                                  shared + "/kineto/df_index_resolver.json.gz"}) {
    if (!fs::exists(path)) GTEST_SKIP() << path << " missing";
    input_ = path;
    absl::StatusOr<std::unique_ptr<Table>> t = Build(std::nullopt, "real.tracetable");
    ASSERT_TRUE(t.ok()) << t.status();
    absl::StatusOr<std::vector<InputFile>> inputs = ExpandInputs({path});
    ASSERT_TRUE(inputs.ok());
    absl::StatusOr<int64_t> origin = FirstTimestampNs((*inputs)[0]);
    ASSERT_TRUE(origin.ok()) << origin.status();
    EXPECT_EQ(*origin, (*t)->meta().origin_ns()) << path;
    t->reset();
    fs::remove_all(dir_ / "real.tracetable");
  }
}

TEST_F(FixedOrigin, GivenOriginShiftsRelativeTimesOnly) {
  absl::StatusOr<std::unique_ptr<Table>> t = Build(int64_t{400000}, "fixed.tracetable");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)->meta().origin_ns(), 400000);
  EXPECT_EQ((*t)->meta().min_ts(), int64_t{600000} * 1000);
  EXPECT_EQ((*t)->meta().max_end(), int64_t{610000} * 1000);
  EXPECT_EQ((*t)->meta().inputs(0).clock_shift_ns(), 0);
  EXPECT_TRUE((*t)->meta().warnings().empty());
  // An origin after the first event works too (negative relative times).
  t = Build(int64_t{1005000}, "later.tracetable");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)->meta().min_ts(), int64_t{-5000} * 1000);
}

TEST_F(FixedOrigin, FarOriginShiftsTheInputAndRecordsIt) {
  const int64_t far = int64_t{40} * 24 * 3600 * 1000000000;  // 40 days: another clock domain
  absl::StatusOr<std::unique_ptr<Table>> t = Build(far, "far.tracetable");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)->meta().origin_ns(), far);
  EXPECT_EQ((*t)->meta().min_ts(), 0);
  EXPECT_EQ((*t)->meta().inputs(0).clock_shift_ns(), far - 1000000);
  EXPECT_EQ((*t)->meta().warnings_size(), 1);
}

}  // namespace
}  // namespace tracetable
