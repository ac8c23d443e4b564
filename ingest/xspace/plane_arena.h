// Memory for decoding XPlanes one after another.
//
// Contract:
//  - PlaneArena::Options() gives ArenaOptions whose first block is a buffer
//    this object owns and reuses, sized to the most the planes before it
//    needed (at least kMinBlockBytes, at most kMaxKeptBytes); any further
//    blocks are large (up to kMaxBlockBytes each) and freed with the arena.
//  - Call Used(arena.SpaceAllocated()) before the arena is destroyed so the
//    next plane's first block fits what this one took.
//  - The buffer must outlive every arena made from Options(); one PlaneArena
//    serves one thread, for the planes of one file (reader.cc), so memory
//    after a read is what it was before.
// Why: protobuf's default arena grows in 8 KiB blocks, each a malloc given
// back per plane. With one reused block the planes after the first decode
// without block mallocs; strings over 15 bytes are still malloc'd (protobuf
// 3.21 does so even on an arena).
#ifndef TRACETABLE_INGEST_XSPACE_PLANE_ARENA_H_
#define TRACETABLE_INGEST_XSPACE_PLANE_ARENA_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "google/protobuf/arena.h"

namespace tracetable::xspace_internal {

class PlaneArena {
 public:
  static constexpr size_t kMinBlockBytes = size_t{256} << 10;
  static constexpr size_t kMaxBlockBytes = size_t{4} << 20;
  static constexpr size_t kMaxKeptBytes = size_t{64} << 20;

  google::protobuf::ArenaOptions Options();
  void Used(uint64_t space_allocated);

 private:
  std::unique_ptr<char[]> block_;
  size_t size_ = 0;
  size_t want_ = kMinBlockBytes;
};

}  // namespace tracetable::xspace_internal

#endif  // TRACETABLE_INGEST_XSPACE_PLANE_ARENA_H_
