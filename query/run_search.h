// Search over a run of shards (store/run_table.h) from the shards' own search
// indexes: the request is asked of every shard holding a requested track, in
// the shard's numbers and times, and the pages are merged in the run's
// (ts, track, id) order, which is the answer one table of all the inputs
// gives (query/search.h's contract, tests/runs/run_table_test.cc).
//
// Exact because each shard's map to the run is monotone: times are shifted,
// event ids keep their order, and a shard's tracks keep theirs (checked here;
// a shard whose do not is not fanned out to). So the run's cursor becomes, in
// each shard, the last local position at or before it, and each shard's
// matches after it, in order, are a sorted stream of the run's. The page is
// a k-way merge of those streams, each read a small page at a time and asked
// for its next page only when it runs out while it leads: exact, and a
// common name over many shards reads about the tiles one table would, not
// `limit` matches' worth per shard.
//
// A shard whose span lies wholly before or after the requested one holds
// no match and is not asked (nor opened).
//
// Not answered here (nullopt: the caller scans the run, which is exact): a
// shard without a search index, a shard whose track map is out of order, or
// a span starting after the end of a shard holding begins kept open (they
// run to the run's end, not its own, so the shard alone cannot say which
// overlap).
#ifndef TRACETABLE_QUERY_RUN_SEARCH_H_
#define TRACETABLE_QUERY_RUN_SEARCH_H_

#include <optional>

#include "absl/status/statusor.h"
#include "query/search.h"
#include "store/table.h"

namespace tracetable {

// `t` must be a run (t.run() != nullptr).
absl::StatusOr<std::optional<SearchResult>> RunIndexSearch(const Table& t, const SearchRequest& request);

}  // namespace tracetable

#endif  // TRACETABLE_QUERY_RUN_SEARCH_H_
