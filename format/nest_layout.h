// Lanes for the slices of an async track, nested by async id: every
// outermost slice of an id (a root) takes, for its whole duration, a block
// of contiguous lanes as tall as its nest (the root and the slices of its id
// nested in it, as the matcher paired them), the lowest block free at its
// start; a slice `depth` levels inside the root goes to the block's lane
// base + depth. So slices of one id stack by depth under their root, and
// overlapping unrelated ids never interleave (Perfetto lays out its merged
// async tracks the same way, by "stalactites").
//
// No two slices of a lane overlap (the query engine's bound rests on it):
// blocks of lanes never overlap in time, and inside a block slices at one
// depth are disjoint because the matcher pairs begins and ends of an id
// last-in first-out.
//
// Slices must be fed in order of (ts ascending, dur descending, id), so a
// root comes before the slices of its nest.
#ifndef TRACETABLE_FORMAT_NEST_LAYOUT_H_
#define TRACETABLE_FORMAT_NEST_LAYOUT_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace tracetable {

// Where a slice sits in the nest of its async id.
struct AsyncNest {
  uint64_t root = 0;    // event id of the nest's root (the slice's own for a root)
  uint32_t depth = 0;   // levels below the root
  uint32_t height = 1;  // lanes the slice's own subtree spans (used for roots)
};

class NestLayout {
 public:
  // Returns the lane of the slice [ts, ts + dur) with event id `id`.
  uint32_t Place(int64_t ts, int64_t dur, uint64_t id, const AsyncNest& nest);
  uint32_t max_lane() const { return max_lane_; }

 private:
  struct Block {
    uint32_t base;
    int64_t end;
  };
  uint32_t PlaceRoot(int64_t ts, int64_t end, uint64_t id, uint32_t height);

  std::vector<int64_t> lane_end_;  // per lane: end of the last block holding it
  absl::flat_hash_map<uint64_t, Block> open_;  // by root id: blocks that may still get slices
  size_t sweep_at_ = 64;
  uint32_t max_lane_ = 0;
};

}  // namespace tracetable

#endif  // TRACETABLE_FORMAT_NEST_LAYOUT_H_
