// The reader keeps its arena's first block from plane to plane of a file
// (ingest/xspace/plane_arena.h). These tests check that a reused or grown
// block never changes what is read, and that the block's size follows the
// contract.
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "ingest/xspace/plane_arena.h"
#include "ingest/xspace/reader.h"
#include "ingest/xspace/xplane.pb.h"
#include "tests/xspace/collecting_sink.h"

namespace tracetable {
namespace {

using testing::CollectingSink;
using xspace_internal::PlaneArena;

const std::string kRealProfile = std::string(TRACETABLE_SHARED_TRACES) +
                                 "/xspace/gpu_multi_worker_host179.xplane.pb";

// Everything of an event, strings resolved, as one comparable line.
std::vector<std::string> Lines(const CollectingSink& sink) {
  std::vector<std::string> out;
  for (const CollectingSink::Stored& s : sink.events) {
    const Event& e = s.event;
    out.push_back(std::to_string(static_cast<int>(e.kind)) + " " +
                  std::to_string(e.track) + " " + std::to_string(e.ts) + " " +
                  std::to_string(e.dur) + " " + std::to_string(e.flags) + " " +
                  std::to_string(e.value) + " " + s.name + " | " + s.cat +
                  " | " + s.flow_id + " | " + s.args);
  }
  return out;
}

std::vector<std::string> ReadLines() {
  CollectingSink sink;
  EXPECT_TRUE(ReadXSpace(kRealProfile, "", &sink).ok());
  return Lines(sink);
}

TEST(XSpaceArenaTest, ReusedAndFreshBlocksReadTheSameEvents) {
  // Every read starts with the smallest block, so the first plane (the
  // host's, most of the file) overflows into further blocks and later planes
  // start in the block it grew; reads on this and another thread, one after
  // another, must agree event for event.
  std::vector<std::string> fresh;
  std::thread([&] { fresh = ReadLines(); }).join();
  ASSERT_GT(fresh.size(), 23000u);
  const std::vector<std::string> first = ReadLines();
  const std::vector<std::string> again = ReadLines();
  EXPECT_EQ(first, fresh);
  EXPECT_EQ(again, fresh);
}

TEST(XSpaceArenaTest, FirstBlockFollowsTheLargestPlaneWithinBounds) {
  PlaneArena arenas;
  google::protobuf::ArenaOptions options = arenas.Options();
  EXPECT_NE(options.initial_block, nullptr);
  EXPECT_EQ(options.initial_block_size, PlaneArena::kMinBlockBytes);
  EXPECT_EQ(options.max_block_size, PlaneArena::kMaxBlockBytes);

  arenas.Used(3'000'000);  // rounded up to whole MiB
  EXPECT_EQ(arenas.Options().initial_block_size, size_t{3} << 20);
  arenas.Used(1000);  // a smaller plane does not shrink it
  EXPECT_EQ(arenas.Options().initial_block_size, size_t{3} << 20);
  arenas.Used(uint64_t{1} << 40);
  EXPECT_EQ(arenas.Options().initial_block_size, PlaneArena::kMaxKeptBytes);
}

TEST(XSpaceArenaTest, MessagesLiveInTheBlockUntilItOverflows) {
  PlaneArena arenas;
  const google::protobuf::ArenaOptions options = arenas.Options();
  const char* begin = options.initial_block;
  const char* end = begin + options.initial_block_size;
  google::protobuf::Arena arena(options);
  auto* plane = google::protobuf::Arena::CreateMessage<xspace::XPlane>(&arena);
  const auto* p = reinterpret_cast<const char*>(plane);
  EXPECT_TRUE(p >= begin && p < end);
  // Fill past the first block: the arena must go on in blocks of its own.
  for (int i = 0; i < 20000; ++i) plane->add_lines()->set_id(i);
  EXPECT_GT(arena.SpaceAllocated(), PlaneArena::kMinBlockBytes);
  EXPECT_EQ(plane->lines(19999).id(), 19999);
  arenas.Used(arena.SpaceAllocated());
}

}  // namespace
}  // namespace tracetable
