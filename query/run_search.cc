#include "query/run_search.h"

#include <algorithm>
#include <cstdint>
#include <memory>
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
  return local;
}

// One shard's matches in run numbers, fetched a page at a time.
struct ShardStream {
  size_t shard = 0;
  std::shared_ptr<const Table> table;
  SearchRequest local;
  std::vector<WindowItem> page;  // in run order
  size_t next = 0;               // first unmerged item of `page`
  bool more = false;             // the shard may hold matches after `page`
};

// Fills `s.page` from where the last page ended; false: not answered from
// the index (the caller scans).
absl::StatusOr<bool> Fetch(const RunShards& run, ShardStream& s, uint64_t* scanned) {
  absl::StatusOr<SearchResult> r = Search(*s.table, s.local);
  if (!r.ok()) return run.Named(s.shard, r.status());
  if (!r->indexed) return false;
  *scanned += r->scanned;
  const RunShardMap& m = run.shards()[s.shard];
  for (WindowItem& item : r->matches) {
    item.track = m.tracks[item.track];
    run.RowToGlobal(s.shard, item.track, &item.row);
  }
  s.page = std::move(r->matches);
  s.next = 0;
  s.more = r->more && !s.page.empty();
  s.local.after = r->next;
  s.local.limit = std::min<uint64_t>(s.local.limit * 2, 4096);  // a shard that keeps winning asks for more at once
  return true;
}

}  // namespace

absl::StatusOr<std::optional<SearchResult>> RunIndexSearch(const Table& t, const SearchRequest& request) {
  const RunShards& run = *t.run();
  std::vector<bool> wanted(t.resources().tracks_size());
  for (uint32_t id : request.tracks) {
    if (id < wanted.size()) wanted[id] = true;
  }
  std::vector<ShardStream> streams;
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
    ShardStream& stream = streams.emplace_back();
    stream.shard = i;
    stream.local = std::move(local);
  }
  // The page needs limit + 1 matches in all. Each shard is first asked for
  // a share of them, not all: with many shards of a common name, asking
  // each for limit + 1 read ~shards× the tiles one table reads. A shard
  // whose page runs out while it still leads is asked for its next page,
  // so the merge is exact either way.
  const uint64_t want = request.limit + 1;
  const uint64_t share = std::clamp<uint64_t>(2 * want / std::max<size_t>(streams.size(), 1) + 1, 2, want);
  SearchResult out;
  out.indexed = true;
  out.scanned_to = request.end;
  for (ShardStream& s : streams) {
    absl::StatusOr<std::shared_ptr<const Table>> shard = run.Acquire(s.shard);
    if (!shard.ok()) return shard.status();
    if (!(*shard)->meta().has_search_index()) return std::nullopt;
    s.table = *std::move(shard);
    s.local.limit = share;
    absl::StatusOr<bool> fetched = Fetch(run, s, &out.scanned);
    if (!fetched.ok()) return fetched.status();
    if (!*fetched) return std::nullopt;
  }
  // Min-heap of streams by their next match.
  auto after = [&](size_t a, size_t b) {
    return Before(streams[b].page[streams[b].next], streams[a].page[streams[a].next]);
  };
  std::vector<size_t> heap;
  for (size_t k = 0; k < streams.size(); ++k) {
    if (!streams[k].page.empty()) heap.push_back(k);
  }
  std::make_heap(heap.begin(), heap.end(), after);
  std::vector<WindowItem> all;
  while (!heap.empty() && all.size() < want) {
    std::pop_heap(heap.begin(), heap.end(), after);
    ShardStream& s = streams[heap.back()];
    all.push_back(std::move(s.page[s.next++]));
    if (s.next == s.page.size()) {
      if (!s.more) {
        heap.pop_back();
        continue;
      }
      absl::StatusOr<bool> fetched = Fetch(run, s, &out.scanned);
      if (!fetched.ok()) return fetched.status();
      if (!*fetched) return std::nullopt;
      if (s.page.empty()) {
        heap.pop_back();
        continue;
      }
    }
    std::push_heap(heap.begin(), heap.end(), after);
  }
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
