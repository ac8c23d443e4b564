// Search (query/search.h) against a brute-force filter of every event: on
// random tables (many tracks, long and nested slices, bursts at one time,
// instants, flows, counters that must never match, names of mixed case) and
// on the shared real traces. Every answer is paged through to the end with
// small limits: the pages joined must equal the filtered events in
// (ts, track, id) order, with no gap and no repeat. Tables with and without
// the search index (the fallback scan) must agree.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "format/keys.h"
#include "gtest/gtest.h"
#include "ingest/input.h"
#include "leveldb/iterator.h"
#include "query/search.h"
#include "query/search_count.h"
#include "query/window.h"
#include "store/table.h"
#include "store/table_builder.h"
#include "tests/shared_traces.h"
#include "tests/table_edit.h"

namespace tracetable {
namespace {
using ::tracetable::testing::SharedTraces;
namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("tt_search_test_" + std::to_string(getpid()) + "_" + std::to_string(counter_++));
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string Sub(const std::string& name) const { return (path_ / name).string(); }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

struct RefEvent {
  uint32_t track;
  int64_t ts, dur;
  std::string name;
  uint64_t id;
  bool counter;
};

using Key = std::tuple<int64_t, uint32_t, uint64_t>;

std::string Lower(std::string_view s) {
  std::string o(s);
  for (char& c : o) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return o;
}

// The brute-force answer: matching events overlapping [start, end] on the
// selected tracks, in order.
std::vector<Key> Expected(const std::vector<RefEvent>& events, const std::string& q,
                          int64_t start, int64_t end, const std::vector<bool>& selected) {
  std::vector<Key> out;
  const std::string lq = Lower(q);
  for (const RefEvent& e : events) {
    if (e.counter || e.name.empty() || !selected[e.track]) continue;
    if (e.ts > end || e.ts + e.dur < start) continue;
    if (Lower(e.name).find(lq) == std::string::npos) continue;
    out.emplace_back(e.ts, e.track, e.id);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Pages through a search with `limit` per page and returns every match.
std::vector<Key> PageThrough(const Table& t, const std::string& q, int64_t start, int64_t end,
                             const std::vector<uint32_t>& tracks, uint64_t limit, bool use_index) {
  SearchRequest req;
  req.names = NamesContaining(t, q, false);
  req.tracks = tracks;
  req.start = start;
  req.end = end;
  req.limit = limit;
  req.use_index = use_index;
  std::vector<Key> got;
  for (int page = 0; page < 1'000'000; ++page) {
    absl::StatusOr<SearchResult> r = Search(t, req);
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) break;
    EXPECT_EQ(r->indexed, use_index && t.meta().has_search_index());
    EXPECT_LE(r->matches.size(), limit);
    for (const WindowItem& m : r->matches) {
      EXPECT_NE(Lower(t.String(m.row.name)).find(Lower(q)), std::string::npos);
      got.emplace_back(m.row.ts, m.track, m.row.id);
    }
    if (!r->more) break;
    EXPECT_EQ(r->matches.size(), limit);  // the index never stops early
    // The cursor goes through its text form, as it does over HTTP.
    std::optional<SearchCursor> c = DecodeCursor(EncodeCursor(r->next));
    EXPECT_TRUE(c.has_value());
    EXPECT_EQ(std::tie(c->ts, c->track, c->id), std::tie(r->next.ts, r->next.track, r->next.id));
    req.after = c;
  }
  return got;
}

std::vector<uint32_t> AllTracks(const Table& t) {
  std::vector<uint32_t> out;
  for (int i = 0; i < t.resources().tracks_size(); ++i) out.push_back(static_cast<uint32_t>(i));
  return out;
}

// Random trace; returns the events as written.
std::vector<RefEvent> MakeTrace(uint32_t seed, int num_tracks, int per_track, TableBuilder* b) {
  std::mt19937_64 rng(seed);
  std::vector<RefEvent> events;
  b->BeginInput("random", "");
  EXPECT_TRUE(b->ToRelativePs(0, 0).ok());
  std::vector<std::string> names;
  for (int i = 0; i < 24; ++i) names.push_back(absl::StrCat(i % 3 == 0 ? "Conv" : i % 3 == 1 ? "MatMul" : "all_reduce", "_", i));
  names.push_back("RARE_needle");
  std::vector<uint32_t> ids;
  for (const std::string& n : names) ids.push_back(b->Intern(n));
  const int64_t span = int64_t{1000} << (14 + rng() % 20);
  uint64_t id = 1;
  auto pick = [&]() -> size_t {
    // Skewed: low indexes are common; the last name is rare.
    if (rng() % 5000 == 0) return names.size() - 1;
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    return static_cast<size_t>(u * u * (names.size() - 1));
  };
  auto add = [&](uint32_t track, EventKind kind, int64_t ts, int64_t dur, bool counter = false) {
    Event e;
    e.kind = kind;
    e.track = track;
    e.ts = ts;
    e.dur = dur;
    const size_t n = pick();
    e.name = ids[n];
    if (kind == EventKind::kFlowStart) e.flow_id = b->Intern(absl::StrCat("f", rng() % 50));
    if (counter) e.value = static_cast<double>(rng() % 100);
    ASSERT_TRUE(b->Add(e).ok());
    events.push_back({track, ts, kind == EventKind::kSlice ? dur : 0, names[n], id++, counter});
  };
  std::lognormal_distribution<double> logdur(std::log(std::max<double>(span / 20000.0, 1)), 2.5);
  for (int t = 0; t < num_tracks; ++t) {
    const uint32_t track = b->ThreadTrack({"1", true}, {std::to_string(t + 1), true});
    for (int i = 0; i < per_track; ++i) {
      const int64_t ts = static_cast<int64_t>(rng() % span);
      int64_t dur = std::min<int64_t>(static_cast<int64_t>(logdur(rng)), span);
      if (rng() % 10 == 0) dur = 0;
      if (rng() % 200 == 0) dur = span * 2;  // reaches past every chunk
      add(track, EventKind::kSlice, ts, dur);
      int64_t child = ts;
      for (int d = 0; d < 2 && dur > 4; ++d) {
        dur /= 3;
        child += dur / 2;
        add(track, EventKind::kSlice, child, dur);
      }
      if (rng() % 7 == 0) add(track, EventKind::kInstant, static_cast<int64_t>(rng() % span), 0);
      if (rng() % 11 == 0) add(track, EventKind::kFlowStart, static_cast<int64_t>(rng() % span), 0);
    }
    if (t == 0) {  // a burst at one time: more rows than a tile holds
      const int64_t at = static_cast<int64_t>(rng() % span);
      for (int i = 0; i < 700; ++i) add(track, EventKind::kSlice, at, rng() % 3 ? 0 : 1 + rng() % 2000);
    }
  }
  // A counter whose series shares names with events: never a match.
  const uint32_t counter = b->CounterTrack({"1", true}, "Conv_0", "value");
  for (int i = 0; i < 500; ++i) add(counter, EventKind::kCounter, static_cast<int64_t>(rng() % span), 0, true);
  return events;
}

// Chunks, and chunks that carry postings, over the whole index.
std::pair<int, int> CountChunks(const Table& t) {
  std::unique_ptr<leveldb::Iterator> it = t.NewIterator();
  int chunks = 0, carrying = 0;
  for (it->Seek(std::string(1, kSearchPrefix)); it->Valid() && it->key()[0] == kSearchPrefix; it->Next()) {
    proto::SearchPostings c;
    EXPECT_TRUE(c.ParseFromArray(it->value().data(), static_cast<int>(it->value().size())));
    ++chunks;
    if (c.carried() > 0) ++carrying;
  }
  return {chunks, carrying};
}

// Removes the index from a finished table, as if an older build wrote it.
void DropIndex(const std::string& path) {
  EditTable(path, [](std::map<std::string, std::string>* records) {
    for (auto it = records->begin(); it != records->end();) {
      const char c = it->first[0];
      it = c == kSearchPrefix || c == kSearchTilesPrefix || c == kSearchGroupPrefix ? records->erase(it)
                                                                                      : std::next(it);
    }
    proto::TableMeta meta;
    ASSERT_TRUE(meta.ParseFromString((*records)[kMetaKey]));
    meta.clear_search_index();
    (*records)[kMetaKey] = meta.SerializeAsString();
  });
}

struct Built {
  TempDir dir;
  std::string path;
  std::vector<RefEvent> events;
};

std::unique_ptr<Built> Build(uint32_t seed, int tracks, int per_track, uint64_t budget,
                             uint64_t stats_bucket_events = BuildOptions{}.stats_bucket_events) {
  auto out = std::make_unique<Built>();
  out->path = out->dir.Sub("t.tracetable");
  BuildOptions opts;
  opts.output = out->path;
  opts.memory_budget = budget;
  opts.stats_bucket_events = stats_bucket_events;
  auto builder = TableBuilder::Create(opts);
  EXPECT_TRUE(builder.ok()) << builder.status();
  out->events = MakeTrace(seed, tracks, per_track, builder->get());
  absl::Status s = (*builder)->Finish();
  EXPECT_TRUE(s.ok()) << s;
  return out;
}

// A random page size up to `max`, but big enough for at most ~60 pages.
uint64_t Limit(std::mt19937_64& rng, uint64_t max, size_t matches) {
  return std::max<uint64_t>(1 + rng() % max, matches / 60);
}

void CheckQueries(const Table& t, const std::vector<RefEvent>& events, uint32_t seed, bool use_index) {
  std::mt19937_64 rng(seed * 7919);
  const int64_t lo = t.meta().min_ts(), hi = t.meta().max_end();
  std::vector<bool> all(t.resources().tracks_size(), true);
  const std::vector<uint32_t> tracks = AllTracks(t);
  // Common (one name, several names), rare, none, and case-insensitive.
  for (const std::string q : {"conv_0", "matmul", "ALL_REDUCE_2", "_1", "rare_NEEDLE", "nothing like it"}) {
    SCOPED_TRACE(q);
    const std::vector<Key> want = Expected(events, q, lo, hi, all);
    EXPECT_EQ(PageThrough(t, q, lo, hi, tracks, Limit(rng, 300, want.size()), use_index), want);
  }
  // Spans that start and end inside events, tiny and wide.
  for (int i = 0; i < 12; ++i) {
    int64_t a = lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
    int64_t b = a + static_cast<int64_t>(rng() % static_cast<uint64_t>((hi - lo) / (1 + rng() % 50) + 1));
    if (i == 0) b = a;  // one instant
    const std::string q = i % 2 ? "mat" : "Conv";
    SCOPED_TRACE(absl::StrCat(q, " in [", a, ", ", b, "]"));
    const std::vector<Key> want = Expected(events, q, a, b, all);
    EXPECT_EQ(PageThrough(t, q, a, b, tracks, Limit(rng, 20, want.size()), use_index), want);
  }
  // A subset of the tracks.
  std::vector<bool> some(t.resources().tracks_size());
  std::vector<uint32_t> chosen;
  for (uint32_t id : tracks) {
    if (rng() % 3 == 0) {
      some[id] = true;
      chosen.push_back(id);
    }
  }
  if (!chosen.empty()) {
    const std::vector<Key> want = Expected(events, "a", lo, hi, some);
    EXPECT_EQ(PageThrough(t, "a", lo, hi, chosen, Limit(rng, 50, want.size()), use_index), want);
  }
}

TEST(Search, RandomTablesMatchBruteForce) {
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE(seed);
    std::unique_ptr<Built> b = Build(seed, 1 + seed * 3, 200 + seed * 150, uint64_t{1} << 30);
    auto table = Table::Open(b->path);
    ASSERT_TRUE(table.ok()) << table.status();
    ASSERT_TRUE((*table)->meta().has_search_index());
    // Groups of rare names' postings; from seed 4 on, common names in
    // more than 128 tiles have chunks of their own too.
    EXPECT_GT((*table)->meta().search_index().groups(), 0u);
    if (seed >= 4) {
      EXPECT_GT((*table)->meta().search_index().chunks(), 0u);
    }
    CheckQueries(**table, b->events, seed, /*use_index=*/true);
  }
}

// A damaged group of rare names' postings is an error, never a short answer.
TEST(Search, DamagedNameGroupIsAnError) {
  std::unique_ptr<Built> b = Build(2, 7, 500, uint64_t{1} << 30);
  EditTable(b->path, [](std::map<std::string, std::string>* records) {
    for (auto& [key, value] : *records) {
      if (key[0] != kSearchGroupPrefix) continue;
      proto::SearchNameGroup g;
      ASSERT_TRUE(g.ParseFromString(value));
      g.set_count(0, g.count(0) + 1);  // a posting more than the group stores
      value = g.SerializeAsString();
    }
  });
  auto table = Table::Open(b->path);
  ASSERT_TRUE(table.ok()) << table.status();
  SearchRequest req;
  req.names.assign((*table)->meta().num_strings(), true);
  req.tracks = AllTracks(**table);
  req.start = (*table)->meta().min_ts();
  req.end = (*table)->meta().max_end();
  req.limit = 1000000;
  absl::StatusOr<SearchResult> r = Search(**table, req);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsDataLoss(r.status())) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "search name group")) << r.status();
}

TEST(Search, LongChunkedPostingsAndSpilling) {
  // Enough tiles that common names span several chunks (carrying postings
  // into the next), and a 64 KiB budget so the postings spill and merge.
  for (uint64_t budget : {uint64_t{1} << 30, uint64_t{64} << 10}) {
    SCOPED_TRACE(budget);
    std::unique_ptr<Built> b = Build(99, 60, 2500, budget);
    auto table = Table::Open(b->path);
    ASSERT_TRUE(table.ok()) << table.status();
    const auto [chunks, carrying] = CountChunks(**table);
    EXPECT_GT(chunks, 40);
    EXPECT_GT(carrying, 3);
    EXPECT_EQ(static_cast<uint64_t>(chunks), (*table)->meta().search_index().chunks());
    CheckQueries(**table, b->events, 99, /*use_index=*/true);
  }
}

TEST(Search, TableWithoutIndexScansAndAgrees) {
  std::unique_ptr<Built> b = Build(3, 8, 800, uint64_t{1} << 30);
  {
    auto table = Table::Open(b->path);
    ASSERT_TRUE(table.ok());
    CheckQueries(**table, b->events, 3, /*use_index=*/false);  // the scan, on an indexed table
  }
  DropIndex(b->path);
  auto table = Table::Open(b->path);
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_FALSE((*table)->meta().has_search_index());
  CheckQueries(**table, b->events, 3, /*use_index=*/true);  // falls back to the scan
}

TEST(Search, CursorText) {
  EXPECT_FALSE(DecodeCursor("zzz").has_value());
  EXPECT_FALSE(DecodeCursor("c1-2").has_value());
  EXPECT_FALSE(DecodeCursor("c1-100000000-3").has_value());  // track > u32
  std::optional<SearchCursor> c = DecodeCursor(EncodeCursor({-5, 7, 42}));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->ts, -5);
  EXPECT_EQ(c->track, 7u);
  EXPECT_EQ(c->id, 42u);
}

// ---- counting (query/search_count.h) ------------------------------------------

SearchRequest CountRequest(const Table& t, const std::string& q, int64_t a, int64_t b) {
  SearchRequest req;
  req.names = NamesContaining(t, q, false);
  req.tracks = AllTracks(t);
  req.start = a;
  req.end = b;
  return req;
}

// From the range aggregates (buckets of about 8 and 2048 events) and, for a
// table without them, by paging through the matches.
class SearchCountTotals : public ::testing::TestWithParam<uint64_t> {};

TEST_P(SearchCountTotals, ExactTotalsMatchBruteForce) {
  std::unique_ptr<Built> built = Build(5, 20, 1500, uint64_t{1} << 30, GetParam());
  auto table = Table::Open(built->path);
  ASSERT_TRUE(table.ok()) << table.status();
  const Table& t = **table;
  ASSERT_EQ(t.meta().has_stats_index(), GetParam() > 0);
  const int64_t lo = t.meta().min_ts(), hi = t.meta().max_end();
  std::vector<bool> all(t.resources().tracks_size(), true);
  std::mt19937_64 rng(5);
  std::vector<bool> odd(all.size(), false);
  std::vector<uint32_t> odd_ids;
  for (size_t k = 1; k < odd.size(); k += 2) {
    odd[k] = true;
    odd_ids.push_back(static_cast<uint32_t>(k));
  }
  // Paging three at a time without aggregates is slow: the track filter
  // rounds only where the aggregates answer.
  for (int i = 0; i < (GetParam() > 0 ? 24 : 16); ++i) {
    int64_t a = lo, b = hi;
    if (i >= 6) {  // spans cutting through events
      a = lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
      b = a + static_cast<int64_t>(rng() % static_cast<uint64_t>((hi - lo) / 4 + 1));
    }
    const bool some = i >= 16;  // a track filter
    const std::string q = std::vector<std::string>{"conv_0", "MATMUL", "_1", "rare_needle", "nothing like it", "a"}[i % 6];
    SCOPED_TRACE(absl::StrCat(q, " in [", a, ", ", b, "]", some ? " on odd tracks" : ""));
    const size_t want = Expected(built->events, q, a, b, some ? odd : all).size();
    for (uint64_t page : {uint64_t{1} << 16, uint64_t{3}}) {  // one page and many
      SearchRequest req = CountRequest(t, q, a, b);
      if (some) req.tracks = odd_ids;
      absl::StatusOr<SearchCount> c = CountMatches(t, req, std::chrono::hours(1), page);
      ASSERT_TRUE(c.ok()) << c.status();
      EXPECT_TRUE(c->exact);
      EXPECT_EQ(c->total, want);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Buckets, SearchCountTotals, ::testing::Values(uint64_t{0}, uint64_t{8}, uint64_t{2048}));

// Only counting match by match has a budget: a table without aggregates.
TEST(SearchCount, OutOfBudgetIsALowerBoundNeverATotal) {
  std::unique_ptr<Built> built = Build(6, 10, 1000, uint64_t{1} << 30, 0);
  auto table = Table::Open(built->path);
  ASSERT_TRUE(table.ok()) << table.status();
  const Table& t = **table;
  const int64_t lo = t.meta().min_ts(), hi = t.meta().max_end();
  std::vector<bool> all(t.resources().tracks_size(), true);
  const size_t want = Expected(built->events, "a", lo, hi, all).size();
  ASSERT_GT(want, 10u);
  // A zero budget stops after the first page of 10.
  absl::StatusOr<SearchCount> c = CountMatches(t, CountRequest(t, "a", lo, hi), std::chrono::milliseconds(0), 10);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->exact);
  EXPECT_EQ(c->total, 10u);
  EXPECT_LT(c->counted_to, hi);
}

// ---- shared real traces -----------------------------------------------------


TEST(Search, SharedRealTraces) {
  const std::vector<std::string> traces = SharedTraces();
  if (traces.empty()) GTEST_SKIP() << "no traces in " << TRACETABLE_SHARED_TRACES;
  TempDir dir;
  int checked = 0;
  for (const std::string& path : traces) {
    SCOPED_TRACE(path);
    absl::StatusOr<std::vector<InputFile>> files = ExpandInputs({path});
    ASSERT_TRUE(files.ok()) << files.status();
    BuildOptions opts;
    opts.output = dir.Sub("real.tracetable");
    opts.overwrite = true;
    auto b = TableBuilder::Create(opts);
    ASSERT_TRUE(b.ok()) << b.status();
    if (!ReadInputs(*files, b->get(), {}).ok()) continue;  // inputs that fail on purpose
    ASSERT_TRUE((*b)->Finish().ok());
    auto table = Table::Open(opts.output);
    ASSERT_TRUE(table.ok()) << table.status();
    const Table& t = **table;
    ASSERT_TRUE(t.meta().has_search_index());
    // The reference: every stored event, from a full-resolution window.
    WindowRequest w;
    w.start = t.meta().min_ts();
    w.end = t.meta().max_end();
    absl::StatusOr<WindowResult> all = QueryWindow(t, w);
    ASSERT_TRUE(all.ok()) << all.status();
    std::vector<RefEvent> events;
    std::map<std::string, int> counts;
    for (const WindowItem& i : all->items) {
      const bool counter = t.resources().tracks(i.track).kind() == proto::Track::COUNTER;
      events.push_back({i.track, i.row.ts, i.row.dur, std::string(t.String(i.row.name)), i.row.id, counter});
      if (!counter && i.row.name != 0) ++counts[events.back().name];
    }
    if (counts.empty()) continue;
    ++checked;
    // The most common name, the rarest, and a case-flipped piece of a middle one.
    std::vector<std::pair<int, std::string>> by_count;
    for (const auto& [name, n] : counts) by_count.emplace_back(n, name);
    std::sort(by_count.begin(), by_count.end());
    std::string piece = by_count[by_count.size() / 2].second.substr(0, 4);
    for (char& c : piece) c = static_cast<char>(std::isupper(static_cast<unsigned char>(c)) ? std::tolower(c) : std::toupper(c));
    std::vector<bool> every(t.resources().tracks_size(), true);
    const std::vector<uint32_t> tracks = AllTracks(t);
    const int64_t lo = t.meta().min_ts(), hi = t.meta().max_end();
    for (const std::string& q : {by_count.back().second, by_count.front().second, piece}) {
      SCOPED_TRACE(q);
      const std::vector<Key> want = Expected(events, q, lo, hi, every);
      EXPECT_FALSE(want.empty());
      const uint64_t limit = std::max<uint64_t>(7, want.size() / 40);
      EXPECT_EQ(PageThrough(t, q, lo, hi, tracks, limit, true), want);
    }
    // The middle third of the trace: events overlapping its start first.
    const int64_t a = lo + (hi - lo) / 3, b2 = lo + 2 * (hi - lo) / 3;
    const std::string& q = by_count.back().second;
    EXPECT_EQ(PageThrough(t, q, a, b2, tracks, 13, true), Expected(events, q, a, b2, every));
  }
  EXPECT_GT(checked, 10);
}

}  // namespace
}  // namespace tracetable
