// Rough event counts from the per-track statistics, for choosing how much of
// a span a query reads at once. Assumes uniform density over each track's
// extent; never reads tiles.
#ifndef TRACETABLE_QUERY_ESTIMATE_H_
#define TRACETABLE_QUERY_ESTIMATE_H_

#include <cstdint>
#include <vector>

#include "store/table.h"

namespace tracetable {

// About how many events of `tracks` lie in [start, end] (relative ps).
double EstimateEvents(const Table& t, const std::vector<uint32_t>& tracks, int64_t start, int64_t end);

}  // namespace tracetable

#endif  // TRACETABLE_QUERY_ESTIMATE_H_
