#include "query/run_search.h"

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

#include "store/run_shards.h"

namespace tracetable {
namespace {

bool Before(const WindowItem& a, const WindowItem& b) {
  return std::tie(a.row.ts, a.track, a.row.id) < std::tie(b.row.ts, b.track, b.row.id);
}

// The shard's last local id whose run id is at most `global` (0: none);
// run ids grow with local ids (store/run_shards.h).
uint64_t LastLocalIdAtOrBefore(const RunShards& run, const RunShardMap& s, uint64_t global) {
  uint64_t lo = 0, hi = s.read_ids + s.derived_ids;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo + 1) / 2;
    if (run.GlobalId(s, mid) <= global) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

// The run's cursor in the shard's numbers: the shard's matches after it are
// exactly those whose run position is after `c`.
SearchCursor LocalCursor(const RunShards& run, const RunShardMap& s, const SearchCursor& c) {
  const int64_t ts = c.ts - s.time_offset;
  const auto past = std::upper_bound(s.tracks.begin(), s.tracks.end(), c.track);
  if (past == s.tracks.begin()) return SearchCursor{ts - 1, UINT32_MAX, UINT64_MAX};
  const uint32_t track = static_cast<uint32_t>(past - s.tracks.begin() - 1);
  const uint64_t id = s.tracks[track] == c.track ? LastLocalIdAtOrBefore(run, s, c.id) : UINT64_MAX;
  return SearchCursor{ts, track, id};
}

// The request in shard `s`'s numbers: empty `tracks` when it holds none.
SearchRequest LocalRequest(const RunShards& run, const RunShardMap& s, const SearchRequest& req,
                           const std::vector<bool>& wanted) {
  SearchRequest local;
  local.names.resize(s.strings.size());
  for (size_t l = 1; l < s.strings.size(); ++l) {
    local.names[l] = s.strings[l] < req.names.size() && req.names[s.strings[l]];
  }
  for (uint32_t l = 0; l < s.tracks.size(); ++l) {
    if (s.tracks[l] < wanted.size() && wanted[s.tracks[l]]) local.tracks.push_back(l);
  }
  local.start = req.start - s.time_offset;
  local.end = req.end - s.time_offset;
  if (req.after) local.after = LocalCursor(run, s, *req.after);
  local.limit = req.limit + 1;  // the one after the page says whether there is more, and where
  return local;
}

}  // namespace

absl::StatusOr<std::optional<SearchResult>> RunIndexSearch(const Table& t, const SearchRequest& request) {
  const RunShards& run = *t.run();
  std::vector<bool> wanted(t.resources().tracks_size());
  for (uint32_t id : request.tracks) {
    if (id < wanted.size()) wanted[id] = true;
  }
  SearchResult out;
  out.indexed = true;
  out.scanned_to = request.end;
  std::vector<WindowItem> all;
  for (size_t i = 0; i < run.shards().size(); ++i) {
    const RunShardMap& s = run.shards()[i];
    SearchRequest local = LocalRequest(run, s, request, wanted);
    if (local.tracks.empty() || request.end < request.start) continue;
    if (!std::is_sorted(s.tracks.begin(), s.tracks.end()) ||
        std::adjacent_find(s.tracks.begin(), s.tracks.end()) != s.tracks.end()) {
      return std::nullopt;
    }
    // No event of a shard starts after its span or ends before it; but a
    // begin it kept open ends at the run's end, not its own.
    if (request.end < s.min_ts + s.time_offset) continue;
    if (request.start > s.max_end + s.time_offset) {
      if (s.incomplete) return std::nullopt;
      continue;
    }
    absl::StatusOr<std::shared_ptr<const Table>> shard = run.Acquire(i);
    if (!shard.ok()) return shard.status();
    if (!(*shard)->meta().has_search_index()) return std::nullopt;
    absl::StatusOr<SearchResult> r = Search(**shard, local);
    if (!r.ok()) return run.Named(i, r.status());
    if (!r->indexed) return std::nullopt;
    out.scanned += r->scanned;
    for (WindowItem& m : r->matches) {
      m.track = s.tracks[m.track];
      run.RowToGlobal(i, m.track, &m.row);
      all.push_back(std::move(m));
    }
  }
  std::sort(all.begin(), all.end(), Before);
  if (all.size() > request.limit) {
    out.more = true;
    out.scanned_to = all[request.limit].row.ts;
    all.resize(request.limit);
    const WindowItem& last = all.back();
    out.next = SearchCursor{last.row.ts, last.track, last.row.id};
  }
  out.matches = std::move(all);
  return out;
}

}  // namespace tracetable
