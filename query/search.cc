#include "query/search.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <memory>
#include <queue>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "format/absl_compat.h"
#include "format/keys.h"
#include "format/search_group_codec.h"
#include "leveldb/iterator.h"
#include "query/estimate.h"
#include "query/run_search.h"

namespace tracetable {
namespace {

bool Before(const WindowItem& a, const WindowItem& b) {
  return std::tie(a.row.ts, a.track, a.row.id) < std::tie(b.row.ts, b.track, b.row.id);
}

bool AfterCursor(const WindowItem& a, const SearchCursor& c) {
  return std::tie(a.row.ts, a.track, a.row.id) > std::tie(c.ts, c.track, c.id);
}

// Whether a row is an answer (its track is known to be selected).
bool Matches(const SearchRequest& req, const TileRow& r, uint32_t track) {
  if (r.name >= req.names.size() || !req.names[r.name]) return false;
  if (r.ts > req.end || r.ts + r.dur < req.start) return false;
  return !req.after || AfterCursor(WindowItem{track, false, r}, *req.after);
}

std::vector<uint32_t> SearchableTracks(const Table& t, const std::vector<uint32_t>& tracks) {
  std::vector<uint32_t> out;
  for (uint32_t id : tracks) {
    if (id < static_cast<uint32_t>(t.resources().tracks_size()) &&
        t.resources().tracks(id).kind() != proto::Track::COUNTER) {
      out.push_back(id);
    }
  }
  return out;
}

// Adds `m` to the page, or ends it: true when the page is full and `m` shows
// that another match exists.
bool Emit(const WindowItem& m, uint64_t limit, SearchResult* out) {
  if (out->matches.size() == limit) {
    const WindowItem& last = out->matches.back();
    out->more = true;
    out->next = SearchCursor{last.row.ts, last.track, last.row.id};
    out->scanned_to = m.row.ts;
    return true;
  }
  out->matches.push_back(m);
  return false;
}

// ---- without an index: resolution-0 windows over the span, chunk by chunk.

absl::StatusOr<SearchResult> ScanSearch(const Table& t, const SearchRequest& req,
                                        std::vector<uint32_t> tracks) {
  SearchResult out;
  out.scanned_to = req.end;
  if (tracks.empty()) return out;
  int64_t a = req.after ? std::max(req.start, req.after->ts) : req.start;
  // The first chunk also takes events that started before it and overlap it
  // (before the span start, or after the cursor); later chunks take only the
  // events starting in them, so none is returned twice.
  bool first_chunk = true;
  // Chunks start at about 32k events (from the density estimate) and grow.
  const double est = std::max(1.0, EstimateEvents(t, tracks, req.start, req.end));
  const double total_span = static_cast<double>(req.end - req.start) + 1;
  int64_t width = static_cast<int64_t>(std::clamp(total_span * 32768.0 / est, 1.0, total_span));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (a <= req.end) {
    const int64_t b = (req.end - a < width) ? req.end : a + width - 1;  // chunk [a, b]
    WindowRequest w;
    w.start = a;
    w.end = b;
    w.resolution = 0;
    w.tracks = tracks;
    w.limit = 1'000'000;
    absl::StatusOr<WindowResult> res = QueryWindow(t, w);
    if (!res.ok()) return res.status();
    if (res->truncated && width > 1) {
      width = std::max<int64_t>(1, width / 4);
      continue;
    }
    out.scanned += res->items.size();
    std::vector<WindowItem> hits;
    for (const WindowItem& it : res->items) {
      if (it.summary || !Matches(req, it.row, it.track)) continue;
      if (it.row.ts <= b && (it.row.ts >= a || first_chunk)) hits.push_back(it);
    }
    first_chunk = false;
    std::sort(hits.begin(), hits.end(), Before);
    for (const WindowItem& h : hits) {
      if (Emit(h, req.limit, &out)) return out;
    }
    if (b == req.end) break;
    a = b + 1;
    // Grow again after a dense part.
    if (res->items.size() < 65536) width = std::min<int64_t>(width * 2, static_cast<int64_t>(total_span));
    if (out.scanned >= kSearchScanBudget || std::chrono::steady_clock::now() > deadline) {
      // Out of budget: a cursor right before the next chunk continues there.
      out.more = true;
      out.scanned_to = a;
      out.next = SearchCursor{a - 1, UINT32_MAX, UINT64_MAX};
      return out;
    }
  }
  out.scanned_to = req.end;
  return out;
}

// ---- with the index: merge the postings of the matching names by tile rank.

absl::Status BadIndex(std::string_view what) {
  return absl::DataLossError(absl::StrCat("search index: ", Av(what)));
}

struct TileInfo {
  uint64_t start;  // relative to min_ts, as in tile keys
  uint64_t end;    // latest end and ts of its rows
  uint64_t last;
  uint32_t track;
  uint32_t level;
};

// The tile directory (keys "D"), read a block at a time and kept for the
// request.
class TileDirectory {
 public:
  explicit TileDirectory(const Table& t) : t_(t), size_(t.meta().search_index().tiles()) {}

  uint64_t size() const { return size_; }

  absl::StatusOr<const TileInfo*> Get(uint64_t rank) {
    if (rank >= size_) return BadIndex("a posting names a tile past the directory");
    absl::StatusOr<const std::vector<TileInfo>*> b = Block(static_cast<uint32_t>(rank >> kSearchTilesBlockShift));
    if (!b.ok()) return b.status();
    const size_t i = rank & ((size_t{1} << kSearchTilesBlockShift) - 1);
    if (i >= (*b)->size()) return BadIndex("a directory block is short");
    return &(**b)[i];
  }

  // The highest rank whose tile starts at or before `rel` (relative ps), or -1.
  absl::StatusOr<int64_t> LastAtOrBefore(uint64_t rel) {
    int64_t lo = 0, hi = static_cast<int64_t>((size_ + kBlockSize - 1) >> kSearchTilesBlockShift) - 1;
    int64_t block = -1;  // the last block whose first tile starts at or before rel
    while (lo <= hi) {
      const int64_t mid = (lo + hi) / 2;
      absl::StatusOr<const std::vector<TileInfo>*> b = Block(static_cast<uint32_t>(mid));
      if (!b.ok()) return b.status();
      if ((*b)->empty()) return BadIndex("an empty directory block");
      if ((**b)[0].start <= rel) {
        block = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    if (block < 0) return -1;
    const std::vector<TileInfo>& b = **Block(static_cast<uint32_t>(block));
    const auto it = std::upper_bound(b.begin(), b.end(), rel,
                                     [](uint64_t v, const TileInfo& x) { return v < x.start; });
    return (block << kSearchTilesBlockShift) + (it - b.begin()) - 1;
  }

 private:
  static constexpr size_t kBlockSize = size_t{1} << kSearchTilesBlockShift;

  absl::StatusOr<const std::vector<TileInfo>*> Block(uint32_t block) {
    auto [it, inserted] = blocks_.try_emplace(block);
    if (!inserted) return &it->second;
    std::string value;
    absl::Status ls = t_.Get(SearchTilesKey(block), &value);
    if (!ls.ok() && !absl::IsNotFound(ls)) return ls;
    proto::SearchTiles d;
    if (!ls.ok() || !d.ParseFromString(value)) return BadIndex(absl::StrCat("directory block ", block, " missing"));
    const int n = d.start_delta_size();
    if (d.track_size() != n || d.level_size() != n || d.reach_size() != n || d.last_size() != n) {
      return BadIndex(absl::StrCat("directory block ", block, " has columns of different lengths"));
    }
    const uint64_t unit = d.unit() == 0 ? 1 : d.unit();
    uint64_t start = 0;
    for (int i = 0; i < n; ++i) {
      start += d.start_delta(i) * unit;
      it->second.push_back(
          TileInfo{start, start + d.reach(i) * unit, start + d.last(i) * unit, d.track(i), d.level(i)});
    }
    return &it->second;
  }

  const Table& t_;
  uint64_t size_;
  absl::flat_hash_map<uint32_t, std::vector<TileInfo>> blocks_;
};

// The rare names' postings (keys "P"), one group at a time: a search looks
// names up in ascending order, so a group is read once.
class NameGroups {
 public:
  explicit NameGroups(const Table& t) : t_(t) {}

  // Replaces `ranks` with the postings of `name` and returns true if its
  // group holds them; false if the name has keys of its own (or none).
  absl::StatusOr<bool> Find(uint32_t name, std::vector<uint32_t>* ranks) {
    const uint32_t group = name >> kSearchGroupShift;
    if (!loaded_ || group != group_) {
      loaded_ = true;
      group_ = group;
      present_ = false;
      std::string value;
      absl::Status s = t_.Get(SearchGroupKey(group), &value);
      if (s.ok()) {
        if (absl::Status p = reader_.Parse(group, value); !p.ok()) return BadIndex(Sv(p.message()));
        present_ = true;
      } else if (!absl::IsNotFound(s)) {
        return s;
      }
    }
    if (!present_) return false;
    absl::StatusOr<bool> found = reader_.Find(name, ranks);
    if (!found.ok()) return BadIndex(Sv(found.status().message()));
    return *found;
  }

 private:
  const Table& t_;
  bool loaded_ = false, present_ = false;
  uint32_t group_ = 0;
  SearchNameGroupReader reader_;
};

// The postings (tile ranks) of one name from a position on, chunk by chunk.
class PostingStream {
 public:
  PostingStream(const Table& t, uint32_t name) : t_(t), name_(name), prefix_(SearchNamePrefix(name)) {}

  // Loads the chunk holding rank `at` (the first chunk if `at` < 0), with
  // what it carries; or all of a rare name's postings, from its group.
  absl::Status SeekTo(int64_t at, NameGroups* groups) {
    absl::StatusOr<bool> grouped = groups->Find(name_, &ranks_);
    if (!grouped.ok()) return grouped.status();
    if (*grouped) {
      pos_ = 0;
      next_key_.clear();
      return absl::OkStatus();
    }
    std::unique_ptr<leveldb::Iterator> it = t_.NewIterator();
    if (at < 0) {
      it->Seek(prefix_);
    } else {
      const std::string target = SearchChunkKey(name_, static_cast<uint32_t>(at));
      it->Seek(target);
      if (!it->Valid() || it->key().ToString() != target) {
        if (it->Valid()) {
          it->Prev();
        } else {
          it->SeekToLast();
        }
        if (!InName(*it)) it->Seek(prefix_);
      }
    }
    return Load(it.get(), /*with_carried=*/true);
  }

  bool done() const { return pos_ == ranks_.size(); }
  uint32_t head() const { return ranks_[pos_]; }
  absl::Status Next() {
    if (++pos_ < ranks_.size() || next_key_.empty()) return absl::OkStatus();
    std::unique_ptr<leveldb::Iterator> it = t_.NewIterator();
    it->Seek(next_key_);
    return Load(it.get(), /*with_carried=*/false);
  }

 private:
  bool InName(const leveldb::Iterator& it) const {
    return it.Valid() && it.key().starts_with(leveldb::Slice(prefix_));
  }

  absl::Status Load(leveldb::Iterator* it, bool with_carried) {
    ranks_.clear();
    pos_ = 0;
    next_key_.clear();
    if (!InName(*it)) return Damage(*it);
    proto::SearchPostings c;
    if (!c.ParseFromArray(it->value().data(), static_cast<int>(it->value().size())) ||
        c.carried() > static_cast<uint32_t>(c.rank_delta_size())) {
      return BadIndex(absl::StrCat("bad postings chunk of name ", name_));
    }
    uint32_t rank = 0;
    for (int i = 0; i < c.rank_delta_size(); ++i) {
      rank += c.rank_delta(i);
      if (with_carried || i >= static_cast<int>(c.carried())) ranks_.push_back(rank);
    }
    it->Next();
    if (InName(*it)) next_key_ = it->key().ToString();
    return Damage(*it);
  }

  absl::Status Damage(const leveldb::Iterator& it) const {
    if (it.status().ok()) return absl::OkStatus();
    return absl::DataLossError(absl::StrCat("corrupt table ", t_.path(), ": ", it.status().ToString()));
  }

  const Table& t_;
  uint32_t name_;
  std::string prefix_;
  std::vector<uint32_t> ranks_;
  size_t pos_ = 0;
  std::string next_key_;  // the following chunk, empty if none
};

absl::StatusOr<SearchResult> IndexSearch(const Table& t, const SearchRequest& req,
                                         const std::vector<uint32_t>& tracks) {
  SearchResult out;
  out.indexed = true;
  out.scanned_to = req.end;
  const int64_t min_ts = t.meta().min_ts();
  if (tracks.empty() || req.end < req.start || req.end < min_ts) return out;
  std::vector<bool> selected(t.resources().tracks_size());
  for (uint32_t id : tracks) selected[id] = true;
  // Every answer ends at or after the span start, starts at or after the
  // cursor, and starts at or before the span end.
  auto rel = [&](int64_t ts) { return static_cast<uint64_t>(std::max<int64_t>(ts - min_ts, 0)); };
  const uint64_t rel_start = rel(req.start);
  const uint64_t rel_after = req.after ? rel(req.after->ts) : 0;
  const uint64_t rel_to = rel(req.end);
  TileDirectory dir(t);
  absl::StatusOr<int64_t> at = dir.LastAtOrBefore(std::max(rel_start, rel_after));
  if (!at.ok()) return at.status();

  // Skips the postings of `s` whose tile cannot hold an answer; false at the
  // end (of the stream, or of the span).
  auto advance = [&](PostingStream* s) -> absl::StatusOr<bool> {
    for (; !s->done(); ) {
      absl::StatusOr<const TileInfo*> ti = dir.Get(s->head());
      if (!ti.ok()) return ti.status();
      if ((*ti)->start > rel_to) return false;
      if ((*ti)->end >= rel_start && (*ti)->last >= rel_after && (*ti)->track < selected.size() &&
          selected[(*ti)->track]) {
        return true;
      }
      if (absl::Status st = s->Next(); !st.ok()) return st;
    }
    return false;
  };
  std::vector<std::unique_ptr<PostingStream>> streams;
  NameGroups groups(t);
  auto later = [](const PostingStream* a, const PostingStream* b) { return a->head() > b->head(); };
  std::priority_queue<PostingStream*, std::vector<PostingStream*>, decltype(later)> heads(later);
  auto push = [&](PostingStream* s) -> absl::Status {
    absl::StatusOr<bool> more = advance(s);
    if (!more.ok()) return more.status();
    if (*more) heads.push(s);
    return absl::OkStatus();
  };
  for (size_t name = 1; name < req.names.size(); ++name) {
    if (!req.names[name]) continue;
    streams.push_back(std::make_unique<PostingStream>(t, static_cast<uint32_t>(name)));
    if (absl::Status st = streams.back()->SeekTo(*at, &groups); !st.ok()) return st;
    if (absl::Status st = push(streams.back().get()); !st.ok()) return st;
  }

  // Matches read but maybe not final: a tile holds only rows at or after its
  // start, so a match before the next unread tile's start is final.
  auto after = [](const WindowItem& a, const WindowItem& b) { return Before(b, a); };
  std::priority_queue<WindowItem, std::vector<WindowItem>, decltype(after)> pending(after);
  int64_t last_read = -1;  // several matching names post the same tile: read it once
  std::string value;
  std::vector<TileRow> rows;
  while (true) {
    int64_t horizon = INT64_MAX;
    if (!heads.empty()) horizon = min_ts + static_cast<int64_t>((*dir.Get(heads.top()->head()))->start);
    while (!pending.empty() && pending.top().row.ts < horizon) {
      if (Emit(pending.top(), req.limit, &out)) return out;
      pending.pop();
    }
    if (heads.empty()) break;
    PostingStream* s = heads.top();
    heads.pop();
    const uint32_t rank = s->head();
    if (rank != last_read) {
      last_read = rank;
      const TileInfo& ti = **dir.Get(rank);
      const TileKey key{ti.track, TileSection::kEvents, static_cast<uint8_t>(ti.level), ti.start};
      absl::Status ls = t.Get(EncodeTileKey(key), &value);
      if (!ls.ok() && !absl::IsNotFound(ls)) return ls;
      if (!ls.ok()) {
        return BadIndex(absl::StrCat("names a missing tile (track ", ti.track, ", level ", ti.level,
                                     "): ", ls.message()));
      }
      rows.clear();
      if (absl::Status st = DecodeTile(value, t.TileStart(key), &rows); !st.ok()) return st;
      out.scanned += rows.size();
      for (const TileRow& r : rows) {
        if (Matches(req, r, ti.track)) pending.push(WindowItem{ti.track, false, r});
      }
    }
    if (absl::Status st = s->Next(); !st.ok()) return st;
    if (absl::Status st = push(s); !st.ok()) return st;
  }
  return out;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

absl::StatusOr<SearchResult> Search(const Table& t, const SearchRequest& request) {
  const std::vector<uint32_t> tracks = SearchableTracks(t, request.tracks);
  if (request.use_index && t.meta().has_search_index()) return IndexSearch(t, request, tracks);
  if (request.use_index && t.run()) {
    absl::StatusOr<std::optional<SearchResult>> r = RunIndexSearch(t, request);
    if (!r.ok()) return r.status();
    if (*r) return **std::move(r);
  }
  return ScanSearch(t, request, tracks);
}

std::vector<bool> NamesContaining(const Table& t, std::string_view needle, bool prefix) {
  std::vector<bool> names(t.num_strings());
  const std::string n = Lower(needle);
  std::string s;
  for (size_t i = 1; i < t.num_strings(); ++i) {
    s = Lower(t.String(static_cast<uint32_t>(i)));
    names[i] = prefix ? s.compare(0, n.size(), n) == 0 : s.find(n) != std::string::npos;
  }
  return names;
}

std::string EncodeCursor(const SearchCursor& c) {
  return absl::StrCat("c", absl::Hex(static_cast<uint64_t>(c.ts)), "-", absl::Hex(c.track), "-",
                      absl::Hex(c.id));
}

std::optional<SearchCursor> DecodeCursor(std::string_view text) {
  if (text.size() < 6 || text[0] != 'c') return std::nullopt;
  std::vector<std::string_view> parts;
  size_t s = 1;
  while (true) {
    size_t e = text.find('-', s);
    parts.push_back(text.substr(s, e == std::string_view::npos ? std::string_view::npos : e - s));
    if (e == std::string_view::npos) break;
    s = e + 1;
  }
  uint64_t ts = 0, track = 0, id = 0;
  if (parts.size() != 3 || !absl::SimpleHexAtoi(Av(parts[0]), &ts) ||
      !absl::SimpleHexAtoi(Av(parts[1]), &track) || !absl::SimpleHexAtoi(Av(parts[2]), &id) ||
      track > UINT32_MAX) {
    return std::nullopt;
  }
  return SearchCursor{static_cast<int64_t>(ts), static_cast<uint32_t>(track), id};
}

}  // namespace tracetable
