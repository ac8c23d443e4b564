// RecordFile (store/record_file.h) gives back every record in the order
// written, whether they stayed in its buffer or went through its file, and
// says so when asked for more than it holds; its file goes with it.
#include "store/record_file.h"

#include <unistd.h>

#include <filesystem>
#include <string>

#include "gtest/gtest.h"

namespace tracetable {
namespace {
namespace fs = std::filesystem;

struct Point {
  int64_t ts = 0;
  uint64_t value = 0;
};

class RecordFileTest : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(dir_); }
  void TearDown() override { fs::remove_all(dir_); }
  const fs::path dir_ = fs::temp_directory_path() / ("tt_record_file_" + std::to_string(getpid()));
};

void WriteAndReadBack(const std::string& path, uint64_t n, bool expect_file) {
  RecordFile<Point> f(path);
  for (uint64_t i = 0; i < n; ++i) ASSERT_TRUE(f.Append(Point{static_cast<int64_t>(i) * 3 - 7, i * i}).ok());
  EXPECT_EQ(f.size(), n);
  ASSERT_TRUE(f.StartReading().ok());
  EXPECT_EQ(fs::exists(path), expect_file);
  for (uint64_t i = 0; i < n; ++i) {
    Point p;
    ASSERT_TRUE(f.Next(&p).ok()) << i;
    ASSERT_EQ(p.ts, static_cast<int64_t>(i) * 3 - 7) << i;
    ASSERT_EQ(p.value, i * i) << i;
  }
  Point past;
  EXPECT_FALSE(f.Next(&past).ok());
}

TEST_F(RecordFileTest, FewRecordsStayInMemory) {
  const std::string path = (dir_ / "few").string();
  WriteAndReadBack(path, 1000, false);
  WriteAndReadBack(path, 0, false);
}

TEST_F(RecordFileTest, ManyRecordsGoThroughTheFileAndItIsRemoved) {
  const std::string path = (dir_ / "many").string();
  // 1 MiB of buffer holds 65,537 points: several refills, one partial.
  WriteAndReadBack(path, 300001, true);
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(RecordFileTest, UnwritableFolderIsAnError) {
  RecordFile<Point> f((dir_ / "missing" / "file").string());
  absl::Status s;
  for (int i = 0; i < 200000 && s.ok(); ++i) s = f.Append(Point{i, 0});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cannot create spill file"), std::string::npos) << s;
}

}  // namespace
}  // namespace tracetable
