#include "query/search_count.h"

#include <utility>
#include <vector>

#include "query/range_stats_index.h"
#include "query/run_range_stats.h"

namespace tracetable {
namespace {

// Matches are the events of the names asked for overlapping the span: per
// name counts of range statistics, which the aggregates give exactly.
absl::StatusOr<SearchCount> CountFromAggregates(const Table& t, const SearchRequest& request) {
  SearchCount out;
  out.counted_to = request.end;
  std::vector<uint32_t> tracks;
  for (uint32_t id : request.tracks) {
    if (id < static_cast<uint32_t>(t.resources().tracks_size()) &&
        t.resources().tracks(static_cast<int>(id)).kind() != proto::Track::COUNTER) {
      tracks.push_back(id);
    }
  }
  if (tracks.empty()) return out;
  absl::StatusOr<RangeStats> stats = t.run() != nullptr ? RunRangeStats(t, tracks, request.start, request.end, 1)
                                                        : RangeStatsFromIndex(t, tracks, request.start, request.end);
  if (!stats.ok()) return stats.status();
  for (const auto& [name, agg] : stats->names) {
    if (name < request.names.size() && request.names[name]) out.total += agg.count;
  }
  return out;
}

}  // namespace

absl::StatusOr<SearchCount> CountMatches(const Table& t, SearchRequest request, std::chrono::milliseconds budget,
                                         uint64_t page) {
  // A run whose shards holding the tracks all have aggregates is answered
  // from theirs (query/run_range_stats.h).
  if (request.use_index && (t.meta().has_stats_index() ||
                            (t.run() != nullptr && RunAnswersFromAggregates(t, request.tracks)))) {
    return CountFromAggregates(t, request);
  }
  const auto deadline = std::chrono::steady_clock::now() + budget;
  request.after.reset();
  request.limit = page < 1 ? 1 : page;
  SearchCount out;
  for (;;) {
    absl::StatusOr<SearchResult> r = Search(t, request);
    if (!r.ok()) return r.status();
    out.total += r->matches.size();
    out.counted_to = r->scanned_to;
    if (!r->more) {
      out.counted_to = request.end;
      return out;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      out.exact = false;
      return out;
    }
    request.after = r->next;
  }
}

}  // namespace tracetable
