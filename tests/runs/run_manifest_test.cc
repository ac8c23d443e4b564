// Run manifests (store/run_manifest.h): round trip, damage detected, and
// concurrent writers from several processes losing nothing.
#include "store/run_manifest.h"

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace tracetable {
namespace {
namespace fs = std::filesystem;

std::string FreshDir(const std::string& name) {
  const fs::path p = fs::path(::testing::TempDir()) / absl::StrCat("run_manifest_", name, "_", ::getpid());
  fs::remove_all(p);
  return p.string();
}

RunShardInfo Shard(const std::string& host, const std::string& input_name) {
  RunShardInfo s;
  s.host = host;
  s.dir = ShardDirFor(host);
  s.table_id = absl::StrCat("id-", host);
  s.min_ts = 7;
  s.max_end = 1000000;
  s.num_events = 42;
  s.event_ids = 45;
  s.num_tracks = 3;
  s.num_processes = 2;
  s.num_levels = 6;
  s.input_name = input_name;
  s.input_path = absl::StrCat("/in/", input_name);
  s.input_bytes = 1234;
  s.clock_shift_ns = -5;
  return s;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

TEST(RunManifest, RoundTripKeepsEveryFieldAndInputOrder) {
  const std::string run = FreshDir("roundtrip");
  EXPECT_FALSE(IsRun(run));
  ASSERT_TRUE(UpdateRunManifest(run, [](RunManifest& m) {
    m.origin_ns = 1700000000123456789;
    m.Put(Shard("hostB", "b.json"));
    m.Put(Shard("hostA", "a.json"));
    return absl::OkStatus();
  }).ok());
  EXPECT_TRUE(IsRun(run));
  absl::StatusOr<RunManifest> m = ReadRunManifest(run);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->format_version, kRunFormatVersion);
  EXPECT_EQ(m->origin_ns, 1700000000123456789);
  EXPECT_EQ(m->generation, 1u);
  EXPECT_EQ(m->run_id.size(), 32u);
  ASSERT_EQ(m->shards.size(), 2u);
  EXPECT_EQ(m->shards[0].host, "hostA");  // input order, not insertion order
  const RunShardInfo want = Shard("hostB", "b.json");
  const RunShardInfo& got = m->shards[1];
  EXPECT_EQ(got.host, want.host);
  EXPECT_EQ(got.dir, "shards/hostB.tracetable");
  EXPECT_EQ(got.table_id, want.table_id);
  EXPECT_EQ(got.min_ts, want.min_ts);
  EXPECT_EQ(got.max_end, want.max_end);
  EXPECT_EQ(got.num_events, want.num_events);
  EXPECT_EQ(got.event_ids, want.event_ids);
  EXPECT_EQ(got.num_tracks, want.num_tracks);
  EXPECT_EQ(got.num_processes, want.num_processes);
  EXPECT_EQ(got.num_levels, want.num_levels);
  EXPECT_EQ(got.input_name, want.input_name);
  EXPECT_EQ(got.input_path, want.input_path);
  EXPECT_EQ(got.input_bytes, want.input_bytes);
  EXPECT_EQ(got.clock_shift_ns, want.clock_shift_ns);

  // Replacing a host keeps one entry and bumps the generation; run_id stays.
  const std::string run_id = m->run_id;
  ASSERT_TRUE(UpdateRunManifest(run, [](RunManifest& m) {
    RunShardInfo s = Shard("hostA", "a.json");
    s.table_id = "new";
    m.Put(s);
    return absl::OkStatus();
  }).ok());
  m = ReadRunManifest(run);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->shards.size(), 2u);
  EXPECT_EQ(m->shards[0].table_id, "new");
  EXPECT_EQ(m->generation, 2u);
  EXPECT_EQ(m->run_id, run_id);
  EXPECT_TRUE(fs::is_directory(fs::path(run) / "shards"));
  fs::remove_all(run);
}

TEST(RunManifest, EveryDamagedByteIsDetected) {
  const std::string run = FreshDir("corrupt");
  ASSERT_TRUE(UpdateRunManifest(run, [](RunManifest& m) {
    m.origin_ns = 99;
    m.Put(Shard("h1", "1.json"));
    return absl::OkStatus();
  }).ok());
  const std::string path = (fs::path(run) / kRunFileName).string();
  const std::string good = ReadAll(path);
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] ^= 0x20;
    WriteAll(path, bad);
    absl::StatusOr<RunManifest> m = ReadRunManifest(run);
    ASSERT_FALSE(m.ok()) << "byte " << i;
    EXPECT_TRUE(absl::IsDataLoss(m.status())) << m.status();
    EXPECT_NE(m.status().message().find("corrupt run manifest"), std::string::npos) << m.status();
  }
  for (size_t n : {size_t{0}, size_t{5}, good.size() - 1}) {
    WriteAll(path, good.substr(0, n));
    EXPECT_TRUE(absl::IsDataLoss(ReadRunManifest(run).status())) << n;
  }
  WriteAll(path, good + "x");
  EXPECT_TRUE(absl::IsDataLoss(ReadRunManifest(run).status()));
  // A writer never replaces a manifest it cannot read.
  WriteAll(path, good.substr(0, 10));
  absl::Status s = UpdateRunManifest(run, [](RunManifest& m) {
    m.Put(Shard("h2", "2.json"));
    return absl::OkStatus();
  });
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_EQ(ReadAll(path), good.substr(0, 10));
  WriteAll(path, good);
  EXPECT_TRUE(ReadRunManifest(run).ok());
  fs::remove_all(run);
}

TEST(RunManifest, InconsistentManifestsAreCorrupt) {
  RunManifest m;
  m.shards = {Shard("h", "a.json"), Shard("h", "b.json")};
  EXPECT_TRUE(absl::IsDataLoss(DecodeRunManifest(EncodeRunManifest(m)).status()));
  m.shards = {Shard("h", "a.json")};
  m.shards[0].dir = "../elsewhere";
  EXPECT_TRUE(absl::IsDataLoss(DecodeRunManifest(EncodeRunManifest(m)).status()));
  m.shards[0].dir = "shards/..";
  EXPECT_TRUE(absl::IsDataLoss(DecodeRunManifest(EncodeRunManifest(m)).status()));
  m.shards[0].dir = "shards/a/b";
  EXPECT_TRUE(absl::IsDataLoss(DecodeRunManifest(EncodeRunManifest(m)).status()));
  m.shards[0].dir = "shards/h.tracetable";
  EXPECT_TRUE(DecodeRunManifest(EncodeRunManifest(m)).ok());
  m.format_version = 2;
  absl::Status s = DecodeRunManifest(EncodeRunManifest(m)).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
}

TEST(RunManifest, MissingManifestIsNotFound) {
  const std::string run = FreshDir("missing");
  fs::create_directories(run);
  EXPECT_FALSE(IsRun(run));
  EXPECT_TRUE(absl::IsNotFound(ReadRunManifest(run).status()));
  fs::remove_all(run);
}

TEST(RunManifest, RefusedEditLeavesManifestUntouched) {
  const std::string run = FreshDir("refused");
  ASSERT_TRUE(UpdateRunManifest(run, [](RunManifest& m) {
    m.Put(Shard("h1", "1.json"));
    return absl::OkStatus();
  }).ok());
  const std::string path = (fs::path(run) / kRunFileName).string();
  const std::string before = ReadAll(path);
  absl::Status s = UpdateRunManifest(run, [](RunManifest& m) {
    m.Put(Shard("h2", "2.json"));
    return absl::AlreadyExistsError("no");
  });
  EXPECT_TRUE(absl::IsAlreadyExists(s));
  EXPECT_EQ(ReadAll(path), before);
  fs::remove_all(run);
}

TEST(RunManifest, ConcurrentWritersFromSeveralProcessesLoseNothing) {
  const std::string run = FreshDir("concurrent");
  constexpr int kProcs = 6;
  constexpr int kEach = 30;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcs; ++p) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int failures = 0;
      for (int i = 0; i < kEach; ++i) {
        const std::string host = absl::StrCat("p", p, "-", i);
        absl::Status s = UpdateRunManifest(run, [&](RunManifest& m) {
          if (m.origin_ns == 0) m.origin_ns = 1000 + p;  // the first writer's origin stays
          m.Put(Shard(host, absl::StrCat(host, ".json")));
          return absl::OkStatus();
        });
        if (!s.ok()) ++failures;
      }
      ::_exit(failures == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  absl::StatusOr<RunManifest> m = ReadRunManifest(run);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->shards.size(), size_t{kProcs * kEach});
  EXPECT_EQ(m->generation, uint64_t{kProcs * kEach});
  EXPECT_GE(m->origin_ns, 1000);
  EXPECT_LT(m->origin_ns, 1000 + kProcs);
  for (int p = 0; p < kProcs; ++p) {
    for (int i = 0; i < kEach; ++i) EXPECT_NE(m->Find(absl::StrCat("p", p, "-", i)), nullptr);
  }
  for (const fs::directory_entry& e : fs::directory_iterator(run)) {
    EXPECT_EQ(e.path().filename().string().find("RUN.tmp-"), std::string::npos) << e.path();
  }
  fs::remove_all(run);
}

TEST(RunManifest, HostNamesMapToDistinctSafeFolders) {
  EXPECT_EQ(ShardDirFor("10.0.0.1_6003"), "shards/10.0.0.1_6003.tracetable");
  EXPECT_EQ(EscapeHostName("a/b"), "a%2fb");
  EXPECT_EQ(EscapeHostName(".."), "%2e.");
  EXPECT_NE(EscapeHostName("a/b"), EscapeHostName("a_b"));
  EXPECT_NE(EscapeHostName("a%2Fb"), EscapeHostName("a/b"));
  EXPECT_EQ(EscapeHostName("h\xff"), "h%ff");
}

}  // namespace
}  // namespace tracetable
