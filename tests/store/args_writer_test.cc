// ArgsWriter (store/args_writer.h): the blocks written on its thread are
// the ones the building thread would have written itself — each block of
// 256 ids under its key, holding exactly its events' texts — also when the
// thread falls behind by more than its queue; and a writer dropped without
// Close() stops.
#include "store/args_writer.h"

#include <unistd.h>

#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "format/args_codec.h"
#include "format/keys.h"
#include "gtest/gtest.h"
#include "store/sorted_runs.h"

namespace tracetable {
namespace {
namespace fs = std::filesystem;

struct ScratchDir {
  ScratchDir() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~ScratchDir() { fs::remove_all(dir); }
  const std::string dir = (fs::temp_directory_path() / ("tt_args_writer_" + std::to_string(getpid()))).string();
};

// Texts of every kind the codec treats apart: columns, layouts, whole texts.
std::string RandomArgs(std::mt19937& rng, uint64_t id) {
  switch (rng() % 4) {
    case 0: return absl::StrCat(R"({"External id":)", id, R"(,"Ev Idx":)", rng() % 100, "}");
    case 1: return absl::StrCat("{ \"name\" : \"op", rng() % 7, "\" }");
    case 2: return absl::StrCat(R"({"nested":{"a":[1,2,)", id, "]}}");
    default: return "{}";
  }
}

TEST(ArgsWriter, WritesEachBlockAsTheBuildingThreadWould) {
  ScratchDir scratch;
  SortedRuns runs(scratch.dir);
  std::mt19937 rng(7);
  std::map<uint64_t, std::vector<ArgsEntry>> want;  // by block
  {
    ArgsWriter writer(runs.NewWriter());
    uint64_t id = 1;
    // 400 blocks, more than the queue holds, some skipped whole.
    for (int n = 0; n < 40000; ++n) {
      id += 1 + (rng() % 8 == 0 ? rng() % 600 : 0);
      const std::string json = RandomArgs(rng, id);
      ASSERT_TRUE(writer.Add(id, json).ok());
      want[id >> kArgsBlockShift].push_back(
          ArgsEntry{static_cast<uint32_t>(id & ((1u << kArgsBlockShift) - 1)), json});
    }
    ASSERT_TRUE(writer.Close().ok());
  }
  ASSERT_GT(want.size(), 100u);
  const uint64_t last = want.rbegin()->first;
  for (uint64_t block = 0; block <= last + 1; ++block) {
    SCOPED_TRACE(block);
    std::string value;
    absl::Status s = runs.Get(ArgsBlockKey(block), &value);
    auto it = want.find(block);
    if (it == want.end()) {
      EXPECT_TRUE(absl::IsNotFound(s)) << s;
      continue;
    }
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(value, EncodeArgsBlock(it->second));
    std::vector<ArgsEntry> got;
    ASSERT_TRUE(DecodeArgsBlock(value, &got).ok());
    EXPECT_EQ(got, it->second);
  }
}

TEST(ArgsWriter, StopsWhenDroppedWithoutClose) {
  ScratchDir scratch;
  SortedRuns runs(scratch.dir);
  ArgsWriter writer(runs.NewWriter());
  for (uint64_t id = 1; id < 100000; ++id) ASSERT_TRUE(writer.Add(id, R"({"a":1})").ok());
}

}  // namespace
}  // namespace tracetable
