// SortedRuns (store/sorted_runs.h): whatever order writers put keys in, with
// rewrites, deletions, cuts and files cut for size, the sealed table reads
// back (through store/table_files.h, as every reader does) exactly the last
// value written of each key, and nothing deleted; Get() answers the same
// from closed files before sealing. Checked against a std::map model on
// random writes; and streams written in order are adopted without a copy.
#include "store/sorted_runs.h"

#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "store/file_list.h"
#include "store/table_files.h"

namespace tracetable {
namespace {
namespace fs = std::filesystem;

struct ScratchDir {
  explicit ScratchDir(const std::string& name) {
    fs::remove_all(path / name);
    fs::create_directories(path / name);
    dir = (path / name).string();
  }
  ~ScratchDir() { fs::remove_all(dir); }
  const fs::path path = fs::temp_directory_path() / ("tt_sorted_runs_" + std::to_string(getpid()));
  std::string dir;
};

using Model = std::map<std::string, std::string>;

std::string Key(uint32_t k) { return absl::StrFormat("k%08u", k); }

absl::Status NoTick() { return absl::OkStatus(); }

// Everything the sealed table holds, in order, read as a reader would.
Model ReadTable(const std::string& dir) {
  Model got;
  auto t = TableFiles::Open(dir, nullptr);
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) return got;
  std::unique_ptr<leveldb::Iterator> it = (*t)->NewIterator();
  std::string last;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const std::string k = it->key().ToString();
    EXPECT_TRUE(got.empty() || k > last) << "keys out of order at " << k;
    last = k;
    got[k] = it->value().ToString();
  }
  EXPECT_TRUE(it->status().ok()) << it->status().ToString();
  return got;
}

void ExpectOnlyTableFiles(const std::string& dir) {
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    EXPECT_TRUE(name == kFileListName || name.starts_with(kSortedFilePrefix)) << name;
  }
}

TEST(SortedRuns, RandomWritesReadBackAsTheLastValueOfEachKey) {
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE(seed);
    ScratchDir scratch("random" + std::to_string(seed));
    SortedRuns runs(scratch.dir);
    // Tiny files and side buffers: many cuts, merges and adoptions.
    runs.set_file_sizes(2 << 10, seed % 2 ? 1 << 10 : 0);
    std::mt19937 rng(seed);
    Model model;
    const uint32_t key_space = seed % 3 == 0 ? 200 : 5000;
    // Writers one after another (a rewrite from a later writer wins, as the
    // argument merge relies on); each writes ascending stretches, random
    // keys, rewrites and deletions, and sometimes cuts.
    for (int w = 0; w < 6; ++w) {
      std::unique_ptr<RunWriter> writer = runs.NewWriter(seed % 4 == 0 ? 256 : 4 << 10);
      uint32_t next = rng() % key_space;
      const int ops = 200 + rng() % 800;
      for (int op = 0; op < ops; ++op) {
        const uint32_t choice = rng() % 100;
        uint32_t k;
        if (choice < 60) {
          next += 1 + rng() % 3;
          k = next % key_space;
        } else {
          k = rng() % key_space;
        }
        if (choice >= 95) {
          ASSERT_TRUE(writer->Delete(Key(k)).ok());
          model.erase(Key(k));
        } else if (choice == 94) {
          ASSERT_TRUE(writer->Cut().ok());
        } else {
          const std::string value = absl::StrFormat("w%d-op%d-%s", w, op, std::string(rng() % 200, 'x'));
          ASSERT_TRUE(writer->Put(Key(k), value).ok());
          model[Key(k)] = value;
        }
      }
      ASSERT_TRUE(writer->Close().ok());
      // Get() sees the closed files as the table will.
      for (int probe = 0; probe < 50; ++probe) {
        const std::string k = Key(rng() % key_space);
        std::string value;
        absl::Status s = runs.Get(k, &value);
        auto it = model.find(k);
        if (it == model.end()) {
          EXPECT_TRUE(absl::IsNotFound(s)) << k << " " << s;
        } else {
          ASSERT_TRUE(s.ok()) << k << " " << s;
          EXPECT_EQ(value, it->second) << k;
        }
      }
    }
    ASSERT_TRUE(runs.Seal(NoTick).ok());
    EXPECT_EQ(ReadTable(scratch.dir), model);
    ExpectOnlyTableFiles(scratch.dir);
  }
}

// Two threads (tile workers) each call `work(t, rng, writer, model)` with a
// writer of their own; then the runs are sealed and must read back as both
// models together. Returns the bytes written before sealing.
using TrackWork = std::function<void(int t, std::mt19937& rng, RunWriter* w, Model* model)>;
uint64_t WriteOnTwoThreadsAndSeal(SortedRuns* runs, const std::string& dir, const TrackWork& work) {
  Model model[2];
  auto thread_main = [&](int t) {
    std::mt19937 rng(t);
    std::unique_ptr<RunWriter> w = runs->NewWriter();
    work(t, rng, w.get(), &model[t]);
    ASSERT_TRUE(w->Close().ok());
  };
  std::thread a(thread_main, 0), b(thread_main, 1);
  a.join();
  b.join();
  const uint64_t written = runs->bytes_written();
  EXPECT_TRUE(runs->Seal(NoTick).ok());
  Model all = model[0];
  all.insert(model[1].begin(), model[1].end());
  EXPECT_EQ(ReadTable(dir), all);
  ExpectOnlyTableFiles(dir);
  return written;
}

// 100 random letters: snappy keeps their size.
std::string RandomValue(std::mt19937& rng) {
  std::string value(100, ' ');
  for (char& c : value) c = static_cast<char>('a' + rng() % 26);
  return value;
}

// Tile workers: threads writing whole tracks in key order, cutting where
// another thread's track falls between theirs. Big in-order files are
// adopted as they are; only small ones are merged.
TEST(SortedRuns, InOrderStreamsFromThreadsAreAdoptedWithoutACopy) {
  ScratchDir scratch("threads");
  SortedRuns runs(scratch.dir);
  runs.set_file_sizes(256 << 10, 32 << 10);
  const uint64_t written = WriteOnTwoThreadsAndSeal(&runs, scratch.dir, [](int t, std::mt19937& rng, RunWriter* w, Model* model) {
    for (uint32_t track = t; track < 40; track += 2) {
      ASSERT_TRUE(w->Cut().ok());
      // The first 20 tracks are small, the rest big.
      const uint32_t rows = track < 20 ? 20 : 4000;
      for (uint32_t r = 0; r < rows; ++r) {
        const std::string k = absl::StrFormat("T%04u-%08u", track, r), value = RandomValue(rng);
        ASSERT_TRUE(w->Put(k, value).ok());
        (*model)[k] = value;
      }
    }
  });
  // The small tracks' files (20 rows each) are all that is copied, into one.
  EXPECT_GT(runs.bytes_copied(), 0u);
  EXPECT_LT(runs.bytes_copied(), written / 20) << written;
  auto list = ReadFileList(scratch.dir);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_LE(list->size(), 1 + 20 * 2u);  // each big track fills two 256 KiB files
  ExpectOnlyTableFiles(scratch.dir);
}

// Thousands of small files (a trace of thousands of short threads) and an
// overlapping component of hundreds (keys written out of order) seal with
// few files open at once: under a limit of 128 descriptors.
TEST(SortedRuns, ManyFilesSealWithinTheDescriptorLimit) {
  ScratchDir scratch("many");
  SortedRuns runs(scratch.dir);
  Model model;
  std::unique_ptr<RunWriter> tracks = runs.NewWriter();
  for (uint32_t track = 0; track < 3000; ++track) {
    for (uint32_t r = 0; r < 3; ++r) {
      const std::string k = absl::StrFormat("T%06u-%u", track, r), v = absl::StrFormat("t%u", track * 3 + r);
      ASSERT_TRUE(tracks->Put(k, v).ok());
      model[k] = v;
    }
    ASSERT_TRUE(tracks->Cut().ok());
  }
  ASSERT_TRUE(tracks->Close().ok());
  // Random keys through a 256-byte side buffer: ~400 overlapping files,
  // rewrites among them (the newest must win after partial merges).
  std::unique_ptr<RunWriter> shuffled = runs.NewWriter(256);
  std::mt19937 rng(7);
  for (int i = 0; i < 6000; ++i) {
    const std::string k = Key(rng() % 2000), v = absl::StrFormat("s%d", i);
    ASSERT_TRUE(shuffled->Put(k, v).ok());
    model[k] = v;
  }
  ASSERT_TRUE(shuffled->Close().ok());
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
  rlimit low = old;
  low.rlim_cur = 128;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  const absl::Status sealed = runs.Seal(NoTick);
  setrlimit(RLIMIT_NOFILE, &old);
  ASSERT_TRUE(sealed.ok()) << sealed;
  EXPECT_EQ(ReadTable(scratch.dir), model);
  ExpectOnlyTableFiles(scratch.dir);
}

// Short tracks' records (AddSmall) from two threads, between big tracks
// written to files: at Seal() they are written in stretches the big files
// do not cut, so the big files are adopted without a copy. Written early
// (past the memory limit, before every file is known) they may overlap a
// later file, which sealing then merges: still the same records.
void SmallRecordsBetweenFiles(uint64_t small_bytes) {
  ScratchDir scratch("small" + std::to_string(small_bytes));
  SortedRuns runs(scratch.dir);
  runs.set_file_sizes(256 << 10, 32 << 10);
  runs.set_small_bytes(small_bytes);
  std::atomic<size_t> records{0};
  const uint64_t written = WriteOnTwoThreadsAndSeal(&runs, scratch.dir, [&](int t, std::mt19937& rng, RunWriter* w, Model* model) {
    for (uint32_t track = t; track < 400; track += 2) {
      const bool big = track % 50 == 7;
      std::vector<std::pair<std::string, std::string>> small;
      for (uint32_t r = 0; r < (big ? 3000u : 5u); ++r) {
        const std::string k = absl::StrFormat("T%04u-%08u", track, r), value = RandomValue(rng);
        (*model)[k] = value;
        if (big) {
          ASSERT_TRUE(w->Put(k, value).ok());
        } else {
          small.emplace_back(k, value);
        }
      }
      if (big) {
        ASSERT_TRUE(w->Cut().ok());
      }
      if (!small.empty()) {
        ASSERT_TRUE(runs.AddSmall(std::move(small)).ok());
      }
    }
    records += model->size();  // each thread its own, once done
  });
  if (small_bytes > records * 200) {
    EXPECT_LT(runs.bytes_copied(), written / 4) << written;
  }
}

TEST(SortedRuns, SmallRecordsFillTheGapsBetweenFiles) { SmallRecordsBetweenFiles(64 << 20); }
TEST(SortedRuns, SmallRecordsWrittenEarlyStillReadBack) { SmallRecordsBetweenFiles(4 << 10); }

TEST(SortedRuns, AnEmptyTableSealsToAnEmptyFileList) {
  ScratchDir scratch("empty");
  SortedRuns runs(scratch.dir);
  std::unique_ptr<RunWriter> w = runs.NewWriter();
  ASSERT_TRUE(w->Close().ok());
  ASSERT_TRUE(runs.Seal(NoTick).ok());
  EXPECT_TRUE(ReadTable(scratch.dir).empty());
  auto list = ReadFileList(scratch.dir);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_TRUE(list->empty());
}

}  // namespace
}  // namespace tracetable
