#include "query/search_count.h"

#include <utility>

namespace tracetable {

absl::StatusOr<SearchCount> CountMatches(const Table& t, SearchRequest request, std::chrono::milliseconds budget,
                                         uint64_t page) {
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
