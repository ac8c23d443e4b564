#include "format/levels.h"

#include <algorithm>

namespace tracetable {

int DurationClass(int64_t dur_ps, int num_levels) {
  int c = 0;
  while (c + 1 < num_levels && Resolution(c + 1) <= dur_ps) ++c;
  return c;
}

int LevelForResolution(int64_t res_ps, int num_levels) {
  return DurationClass(res_ps, num_levels);
}

int NumLevelsForSpan(int64_t span_ps) {
  int k = 1;
  while (k + 1 < kMaxLevels && Resolution(k) < span_ps) ++k;
  return std::max(2, k + 1);
}

}  // namespace tracetable
