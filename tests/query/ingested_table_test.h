// A gtest fixture for tests that ingest small inputs through the real reader
// into real tables in a scratch folder (removed after each test), and a window
// over a whole table.
#ifndef TRACETABLE_TESTS_QUERY_INGESTED_TABLE_TEST_H_
#define TRACETABLE_TESTS_QUERY_INGESTED_TABLE_TEST_H_

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ingest/input.h"
#include "query/window.h"
#include "store/table.h"
#include "store/table_builder.h"

namespace tracetable::testing {

class IngestedTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tt_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  // Ingests `input` (a path) into `name` and opens it.
  std::unique_ptr<Table> Ingest(const std::string& input, const std::string& name) {
    absl::StatusOr<std::vector<InputFile>> files = ExpandInputs({input});
    EXPECT_TRUE(files.ok()) << files.status();
    BuildOptions opts;
    opts.output = Path(name);
    absl::StatusOr<std::unique_ptr<TableBuilder>> b = TableBuilder::Create(opts);
    EXPECT_TRUE(b.ok()) << b.status();
    EXPECT_TRUE(ReadInputs(*files, b->get(), {}).ok());
    EXPECT_TRUE((*b)->Finish().ok());
    absl::StatusOr<std::unique_ptr<Table>> t = Table::Open(Path(name));
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? std::move(*t) : nullptr;
  }
  std::unique_ptr<Table> IngestText(const std::string& json, const std::string& name) {
    std::ofstream(Path(name + ".json")) << json;
    return Ingest(Path(name + ".json"), name);
  }

  std::filesystem::path dir_;
};

// Every item of a window over the whole table at full resolution.
inline std::vector<WindowItem> Everything(const Table& t) {
  WindowRequest req;
  req.start = t.meta().min_ts();
  req.end = t.meta().max_end();
  absl::StatusOr<WindowResult> r = QueryWindow(t, req);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? r->items : std::vector<WindowItem>();
}

}  // namespace tracetable::testing

#endif  // TRACETABLE_TESTS_QUERY_INGESTED_TABLE_TEST_H_
