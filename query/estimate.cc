#include "query/estimate.h"

#include <algorithm>
#include <climits>

namespace tracetable {

double EstimateEvents(const Table& t, const std::vector<uint32_t>& tracks, int64_t start, int64_t end) {
  double total = 0;
  for (uint32_t id : tracks) {
    const proto::Track& tr = t.resources().tracks(id);
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const proto::ClassExtent& c : tr.classes()) {
      if (c.count() == 0) continue;
      lo = std::min(lo, c.min_ts());
      hi = std::max(hi, c.max_end());
    }
    if (lo > hi) continue;
    const double span = std::max<double>(1, static_cast<double>(hi - lo));
    const double ov = static_cast<double>(std::min(hi, end)) - static_cast<double>(std::max(lo, start));
    if (ov < 0) continue;
    total += static_cast<double>(tr.num_events()) * std::min(1.0, (ov + 1) / span);
  }
  return total;
}

}  // namespace tracetable
