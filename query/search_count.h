// Counting search matches: the exact number of events a search (query/search.h)
// would return, over the whole requested span, or a lower bound when the
// time budget runs out first.
//
// Contract (tests/search): with `exact` set, `total` equals the number of
// matches paging through Search to the end would give (same names, tracks
// and span; `after` and `limit` of the request are ignored). Without it,
// `total` matches were counted, all of them at or before `counted_to`, and
// more may exist: the caller must show a lower bound ("≥ total"), never a
// total. A table with range aggregates (TableMeta.stats_index) counts
// from them, exactly at any count, in about the time of a range statistics
// query (query/range_stats_index.h), unless `use_index` is off; so does a
// run whose shards holding the searched tracks all answer from theirs
// (query/run_range_stats.h). Otherwise
// cost is that of reading every match (with the search index: only tiles
// holding one), bounded by `budget` plus one page.
#ifndef TRACETABLE_QUERY_SEARCH_COUNT_H_
#define TRACETABLE_QUERY_SEARCH_COUNT_H_

#include <chrono>
#include <cstdint>

#include "absl/status/statusor.h"
#include "query/search.h"
#include "store/table.h"

namespace tracetable {

struct SearchCount {
  uint64_t total = 0;
  bool exact = true;
  int64_t counted_to = 0;  // relative ps: where counting stopped (the span end when exact)
};

// `page` matches are read per Search call; the budget is checked between pages.
absl::StatusOr<SearchCount> CountMatches(const Table& t, SearchRequest request, std::chrono::milliseconds budget,
                                         uint64_t page = 65536);

}  // namespace tracetable

#endif  // TRACETABLE_QUERY_SEARCH_COUNT_H_
