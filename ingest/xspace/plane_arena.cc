#include "ingest/xspace/plane_arena.h"

#include <algorithm>

namespace tracetable::xspace_internal {

google::protobuf::ArenaOptions PlaneArena::Options() {
  if (size_ < want_) {
    // new char[] is aligned for any fundamental type, which the arena needs.
    block_.reset(new char[want_]);
    size_ = want_;
  }
  google::protobuf::ArenaOptions options;
  options.initial_block = block_.get();
  options.initial_block_size = size_;
  options.start_block_size = kMinBlockBytes;
  options.max_block_size = kMaxBlockBytes;
  return options;
}

void PlaneArena::Used(uint64_t space_allocated) {
  // Round up to whole MiB so planes of similar size do not regrow the block.
  constexpr uint64_t kStep = uint64_t{1} << 20;
  const uint64_t rounded = (space_allocated + kStep - 1) / kStep * kStep;
  want_ = std::max<size_t>(
      want_, static_cast<size_t>(std::min<uint64_t>(rounded, kMaxKeptBytes)));
}

}  // namespace tracetable::xspace_internal
