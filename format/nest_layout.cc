#include "format/nest_layout.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"

namespace tracetable {

uint32_t NestLayout::PlaceRoot(int64_t ts, int64_t end, uint64_t id, uint32_t height) {
  // The lowest run of `height` lanes free at ts (half-open: a block may
  // start where another ended; lanes past the end are free).
  uint32_t base = 0, run = 0;
  for (uint32_t lane = 0; run < height; ++lane) {
    if (lane < lane_end_.size() && lane_end_[lane] > ts) {
      base = lane + 1;
      run = 0;
    } else {
      ++run;
    }
  }
  const uint32_t top = base + height - 1;
  if (top >= lane_end_.size()) lane_end_.resize(top + 1, INT64_MIN);
  for (uint32_t lane = base; lane <= top; ++lane) lane_end_[lane] = end;
  max_lane_ = std::max(max_lane_, top);
  // Blocks that ended before ts get no more slices: their nests' slices
  // start no later than their roots end.
  if (open_.size() >= sweep_at_) {
    absl::erase_if(open_, [ts](const auto& kv) { return kv.second.end < ts; });
    sweep_at_ = std::max<size_t>(64, open_.size() * 2);
  }
  open_[id] = Block{base, end};
  return base;
}

uint32_t NestLayout::Place(int64_t ts, int64_t dur, uint64_t id, const AsyncNest& nest) {
  const uint32_t height = std::max<uint32_t>(nest.height, 1);
  if (nest.root == id) return PlaceRoot(ts, ts + dur, id, height);
  auto it = open_.find(nest.root);
  // Cannot happen for nests the matcher built (their root comes first and
  // stays open until they end); placed as a nest of its own, a lane still
  // never holds two overlapping slices.
  if (it == open_.end()) return PlaceRoot(ts, ts + dur, id, height);
  const uint32_t lane = it->second.base + nest.depth;
  max_lane_ = std::max(max_lane_, lane);
  return lane;
}

}  // namespace tracetable
