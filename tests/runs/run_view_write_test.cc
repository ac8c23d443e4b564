// RUN.view written by --shard-of from the previous view (store/run_view.h,
// MakeRunView: leading shards kept as they are, the others remapped through
// the old string table) is field for field (protobuf maps compared in
// deterministic order) the view written from scratch by
// opening every shard: hosts added in an order that inserts them at the
// front, middle and end of the manifest, hosts with strings of their own
// and async tracks (whose keys depend on the shard's index), a replaced
// shard, and a damaged or missing old view (rebuilt from the shards).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/run_ingest.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "gtest/gtest.h"
#include "ingest/input.h"
#include "store/run_manifest.h"
#include "store/run_view.h"

namespace tracetable {
namespace {

namespace fs = std::filesystem;

// Names shared by every host, names of host `h` alone, and (odd hosts)
// async slices.
std::string Trace(int h, int variant) {
  std::ostringstream o;
  o << "{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":100,\"dur\":900,\"name\":\"step\"}";
  for (int i = 0; i < 40; ++i) {
    o << ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":" << 1 + i % 3 << ",\"ts\":" << 100 + i * 20 << ",\"dur\":10,\"name\":\""
      << (i % 2 ? absl::StrCat("op", i % 7) : absl::StrCat("own", h, "_", variant, "_", i % 5)) << "\"}";
  }
  if (h % 2 == 1) {
    o << ",\n{\"ph\":\"b\",\"pid\":1,\"tid\":1,\"ts\":150,\"id\":\"a" << h << "\",\"name\":\"req\",\"cat\":\"c\"}"
      << ",\n{\"ph\":\"e\",\"pid\":1,\"tid\":1,\"ts\":450,\"id\":\"a" << h << "\",\"name\":\"req\",\"cat\":\"c\"}";
  }
  o << "\n]}\n";
  return o.str();
}

class RunViewWriteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / absl::StrCat("tt_run_view_write_", getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "in");
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Add(int h, int variant = 0, bool force = false) {
    const fs::path in = dir_ / "in" / absl::StrCat("host", h, "_v", variant, ".json");
    std::ofstream(in) << Trace(h, variant);
    absl::StatusOr<std::vector<InputFile>> files = ExpandInputs({in.string()});
    ASSERT_TRUE(files.ok()) << files.status();
    cli::ShardOptions o;
    o.force = force;
    absl::StatusOr<cli::ShardResult> r = cli::IngestShardOf((*files)[0], Run(), absl::StrCat("host", h), std::nullopt, o);
    ASSERT_TRUE(r.ok()) << r.status();
  }
  // The view on disk equals the one written from the shards alone.
  void ExpectFromScratch(const std::string& what) {
    absl::StatusOr<RunManifest> m = ReadRunManifest(Run());
    ASSERT_TRUE(m.ok()) << m.status();
    absl::StatusOr<RunView> disk = ReadRunView(Run());
    ASSERT_TRUE(disk.ok()) << disk.status();
    absl::StatusOr<RunView> scratch = DecodeRunView(EncodeRunView(MakeRunView(Run(), *m, nullptr)));
    ASSERT_TRUE(scratch.ok()) << scratch.status();
    EXPECT_EQ(disk->run_id, scratch->run_id) << what;
    EXPECT_EQ(disk->generation, scratch->generation) << what;
    EXPECT_EQ(disk->strings, scratch->strings) << what;
    ASSERT_EQ(disk->shards.size(), m->shards.size()) << what;
    ASSERT_EQ(disk->shards.size(), scratch->shards.size()) << what;
    for (size_t i = 0; i < disk->shards.size(); ++i) {
      const ViewShard &d = disk->shards[i], &s = scratch->shards[i];
      EXPECT_EQ(d.identity, m->shards[i].table_id) << what << ", shard " << i;
      EXPECT_EQ(d.identity, s.identity) << what << ", shard " << i;
      EXPECT_EQ(Deterministic(d.meta), Deterministic(s.meta)) << what << ", shard " << i;
      EXPECT_EQ(Deterministic(d.resources), Deterministic(s.resources)) << what << ", shard " << i;
      EXPECT_EQ(d.strings, s.strings) << what << ", shard " << i;
      EXPECT_EQ(d.async_strings, s.async_strings) << what << ", shard " << i;
      // The coarse tiles are copied from the shard: the same whichever way.
      ASSERT_TRUE(d.coarse && s.coarse) << what << ", shard " << i;
      EXPECT_EQ(d.coarse->bytes(), s.coarse->bytes()) << what << ", shard " << i;
    }
  }
  static std::string Deterministic(const google::protobuf::Message& msg) {
    std::string out;
    {
      google::protobuf::io::StringOutputStream stream(&out);
      google::protobuf::io::CodedOutputStream coded(&stream);
      coded.SetSerializationDeterministic(true);
      msg.SerializeToCodedStream(&coded);
    }
    return out;
  }
  std::string Run() const { return (dir_ / "run.tracetable").string(); }

  fs::path dir_;
};

TEST_F(RunViewWriteTest, ViewFromThePreviousOneEqualsOneFromScratch) {
  // Input file names order the manifest: host5, then host2 (front), host9
  // (end), host3 and host7 (middle), host1 (front again).
  for (int h : {5, 2, 9, 3, 7, 1, 8, 4}) {
    Add(h);
    ExpectFromScratch(absl::StrCat("after adding host", h));
  }
  // A host replaced by a capture with other strings.
  Add(3, 1, /*force=*/true);
  ExpectFromScratch("after replacing host3");
  Add(1, 2, /*force=*/true);
  ExpectFromScratch("after replacing host1");
  // A damaged old view is rebuilt from the shards; so is a missing one.
  {
    std::fstream f(fs::path(Run()) / kRunViewFileName, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    f.put('\x5a');
  }
  Add(6);
  ExpectFromScratch("after a damaged view");
  fs::remove(fs::path(Run()) / kRunViewFileName);
  Add(0);
  ExpectFromScratch("after a missing view");
}

}  // namespace
}  // namespace tracetable
