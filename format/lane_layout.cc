#include "format/lane_layout.h"

namespace tracetable {

uint32_t LaneLayout::Place(int64_t ts, int64_t dur) {
  const int64_t end = ts + dur;
  // Drop enclosing slices that ended; a zero-length parent at the same ts
  // cannot hold children.
  while (!stack_.empty() &&
         (stack_.back().end < end || stack_.back().end <= ts)) {
    stack_.pop_back();
  }
  uint32_t lane = stack_.empty() ? 0 : stack_.back().lane + 1;
  // Half-open intervals: a slice may start where the previous one ended.
  // Zero-length slices may share a lane; they are never long enough to be
  // drawn one by one at a resolution above zero.
  while (lane < lane_end_.size() && lane_end_[lane] > ts) {
    ++lane;
  }
  if (lane >= lane_end_.size()) lane_end_.resize(lane + 1, INT64_MIN);
  lane_end_[lane] = end;
  stack_.push_back({end, lane});
  if (lane > max_lane_) max_lane_ = lane;
  return lane;
}

void LaneLayout::Reset() {
  stack_.clear();
  lane_end_.clear();
  max_lane_ = 0;
}

}  // namespace tracetable
