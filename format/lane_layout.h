// Assigns each slice of one track a lane (nesting depth) so that no two
// slices in one lane overlap. Properly nested slices get parent depth + 1;
// overlapping or badly nested ones go to the first deeper lane that is free.
// The query engine's bound of about (end - start) / resolution items per lane
// rests on that no-overlap property.
//
// Slices must be fed in order of (ts ascending, dur descending).
#ifndef TRACETABLE_FORMAT_LANE_LAYOUT_H_
#define TRACETABLE_FORMAT_LANE_LAYOUT_H_

#include <cstdint>
#include <vector>

namespace tracetable {

class LaneLayout {
 public:
  // Returns the lane for the slice [ts, ts + dur).
  uint32_t Place(int64_t ts, int64_t dur);
  uint32_t max_lane() const { return max_lane_; }
  void Reset();

 private:
  struct Open {
    int64_t end;
    uint32_t lane;
  };
  std::vector<Open> stack_;         // enclosing candidates, innermost last
  std::vector<int64_t> lane_end_;   // end of the last slice placed per lane
  uint32_t max_lane_ = 0;
};

}  // namespace tracetable

#endif  // TRACETABLE_FORMAT_LANE_LAYOUT_H_
