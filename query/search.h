// Search: the events whose name matches, in time order, a page at a time.
//
// Contract (checked against a brute-force filter in tests/search):
//  - the answer is the events of the requested tracks (counter tracks never
//    match) whose name id is marked in `names` and that overlap [start, end]
//    (ts <= end and ts + dur >= start), in (ts, track, id) order, after
//    `after` when given, at most `limit` of them;
//  - `more` is set when a further match exists and `next` is then the last
//    match returned: asking again with after = next continues with no gap
//    and no repeat. Scanning a table without an index may also stop early
//    (after ~5 s or kSearchScanBudget rows) with `more` set and a cursor
//    that resumes where it stopped.
//
// Cost: a table with a search index (TableMeta.search_index) answers from
// its postings: per matching name one seek to the chunk holding the position
// (the cursor, or the span start), then only tiles holding a match are read,
// so a page costs about limit + (tiles reaching the position) tile reads
// whatever the table's size. Without the index (older tables) every event in
// the span is read, in chunks, until the page is full. A run of shards
// answers from its shards' indexes (query/run_search.h), or scans when one
// has none.
#ifndef TRACETABLE_QUERY_SEARCH_H_
#define TRACETABLE_QUERY_SEARCH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "query/window.h"
#include "store/table.h"

namespace tracetable {

// Rows a scan without an index reads before it returns a partial page.
constexpr uint64_t kSearchScanBudget = 20'000'000;

struct SearchCursor {
  int64_t ts = 0;  // relative ps
  uint32_t track = 0;
  uint64_t id = 0;
};

struct SearchRequest {
  std::vector<bool> names;       // by name id: true = matches
  std::vector<uint32_t> tracks;  // the tracks to search (counters are skipped)
  int64_t start = 0;             // relative ps, inclusive
  int64_t end = 0;               // relative ps, inclusive
  std::optional<SearchCursor> after;
  uint64_t limit = 100;          // >= 1
  bool use_index = true;         // false: scan even if the table has an index
};

struct SearchResult {
  std::vector<WindowItem> matches;
  bool more = false;       // a next page may exist
  SearchCursor next;       // where it starts (when `more`)
  int64_t scanned_to = 0;  // relative ps the search reached
  uint64_t scanned = 0;    // rows read
  bool indexed = false;    // answered from the search index
};

absl::StatusOr<SearchResult> Search(const Table& t, const SearchRequest& request);

// Names (by id) that contain `needle` (or start with it, if `prefix`),
// ignoring ASCII case. The empty name (id 0) never matches.
std::vector<bool> NamesContaining(const Table& t, std::string_view needle, bool prefix);

// Cursors as text: "c<ts hex>-<track hex>-<id hex>".
std::string EncodeCursor(const SearchCursor& c);
std::optional<SearchCursor> DecodeCursor(std::string_view text);

}  // namespace tracetable

#endif  // TRACETABLE_QUERY_SEARCH_H_
