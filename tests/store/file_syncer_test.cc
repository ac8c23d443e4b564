// FileSyncer (store/file_syncer.h): Drain() waits for every file added
// before it and names exactly those that were synced; a file that cannot be
// opened is left out; destroying a syncer with files queued returns.
#include "store/file_syncer.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace tracetable {
namespace {
namespace fs = std::filesystem;

class FileSyncerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << "contents of " << name;
    return path;
  }
  const fs::path dir_ = fs::temp_directory_path() / ("tt_file_syncer_" + std::to_string(getpid()));
};

TEST_F(FileSyncerTest, DrainNamesEveryFileSyncedBeforeIt) {
  FileSyncer syncer;
  EXPECT_TRUE(syncer.Drain().empty());
  std::vector<std::string> paths;
  for (int i = 0; i < 20; ++i) {
    paths.push_back(Write(absl::StrCat("f", i)));
    syncer.Add(paths.back());
  }
  const std::string missing = (dir_ / "never-written").string();
  syncer.Add(missing);
  const absl::flat_hash_set<std::string> synced = syncer.Drain();
  EXPECT_EQ(synced.size(), paths.size());
  for (const std::string& p : paths) EXPECT_TRUE(synced.contains(p)) << p;
  EXPECT_FALSE(synced.contains(missing));

  const std::string later = Write("later");
  syncer.Add(later);
  EXPECT_TRUE(syncer.Drain().contains(later));
}

TEST_F(FileSyncerTest, DestroyingWithFilesQueuedReturns) {
  auto syncer = std::make_unique<FileSyncer>();
  for (int i = 0; i < 200; ++i) syncer->Add(Write(absl::StrCat("q", i)));
  syncer.reset();
  SUCCEED();
}

}  // namespace
}  // namespace tracetable
