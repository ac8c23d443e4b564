#include "query/range_stats_index.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "format/stats_codec.h"
#include "query/parallel_for.h"
#include "query/range_stats_edges.h"
#include "query/range_stats_exact.h"
#include "store/corruption.h"

namespace tracetable {
namespace {

using Outside = absl::flat_hash_map<uint64_t, int64_t>;  // parent id -> ps its children inside cover buckets take

// From the metadata (which a loaded string table is checked against): a
// run's shard is opened without its strings (store/run_shards.h).
size_t NumStrings(const Table& t) { return static_cast<size_t>(t.meta().num_strings()); }

bool IsCounter(const Table& t, uint32_t track) {
  return t.resources().tracks(static_cast<int>(track)).kind() == proto::Track::COUNTER;
}

// Buffers one thread reuses for every bucket it decodes.
struct BucketScratch {
  std::string value;
  proto::StatsBucket proto;
  StatsBucketData data;
};

absl::Status ReadAggregates(const Table& t, uint32_t track, const std::vector<BucketId>& cover, StatsTally* tally,
                            Outside* outside, BucketScratch* scratch) {
  const bool counter = IsCounter(t, track);
  RangeAgg sum;
  for (const BucketId& b : cover) {
    absl::Status s = t.Get(StatsBucketKey(track, b), &scratch->value);
    if (absl::IsNotFound(s)) continue;
    if (!s.ok()) return s;
    StatsBucketData* d = &scratch->data;
    if (absl::Status e = DecodeStatsBucket(scratch->value, NumStrings(t), &scratch->proto, d); !e.ok()) {
      return CorruptTable(t.path(), absl::StrCat("track ", track, ": ", e.message()));
    }
    if (counter ? !d->names.empty() : d->samples != 0) {
      return CorruptTable(t.path(), absl::StrCat("track ", track, ": stats bucket of the wrong kind"));
    }
    sum.count += d->samples;
    for (const StatsNameRow& r : d->names) {
      const RangeAgg a{r.count, r.slices, r.total, r.self, r.min, r.max};
      tally->AddName(r.name, a);
      sum.count += a.count;
      sum.slices += a.slices;
      sum.total += a.total;
      sum.self += a.self;
    }
    for (const auto& [id, time] : d->parents) (*outside)[id] += time;
  }
  if (sum.count > 0) tally->AddTrack(track, sum);
  return absl::OkStatus();
}

// The points and pieces of [a, b] whose windows hold every event lying in
// no cover bucket: the edges outside the cover and each boundary inside it.
std::vector<std::pair<int64_t, int64_t>> RestSpans(const StatsGrid& g, const std::vector<BucketId>& cover, int64_t a,
                                                   int64_t b) {
  if (cover.empty()) return {{a, b}};
  std::vector<std::pair<int64_t, int64_t>> spans;
  spans.emplace_back(a, BucketStart(g, cover.front()));
  for (size_t i = 0; i + 1 < cover.size(); ++i) spans.emplace_back(BucketEnd(g, cover[i]), BucketEnd(g, cover[i]));
  spans.emplace_back(BucketEnd(g, cover.back()), b);
  return spans;
}

int64_t FirstSample(const proto::Track& tr) {
  int64_t first = INT64_MAX;
  for (const proto::ClassExtent& e : tr.classes()) {
    if (e.count() > 0) first = std::min(first, e.min_ts());
  }
  return first;
}

// One query's plan, shared read-only by the threads answering its tracks.
struct Plan {
  StatsGrid grid;
  std::vector<BucketId> cover;
  std::vector<std::pair<int64_t, int64_t>> spans;
  CoverSpan cover_span;
  int64_t a = 0, b = 0;
};

// What one thread keeps between the tracks it answers.
struct Worker {
  explicit Worker(size_t num_strings) : tally(num_strings) {}
  StatsTally tally;
  std::vector<TileRow> scratch;
  std::vector<StatsRow> rows, merge_tmp;
  BucketScratch buckets;
  Outside outside;
  uint64_t events = 0;
};

absl::Status SliceTrack(const Table& t, const Plan& p, uint32_t track, Worker* w) {
  w->outside.clear();
  if (absl::Status s = ReadAggregates(t, track, p.cover, &w->tally, &w->outside, &w->buckets); !s.ok()) return s;
  w->rows.clear();
  if (absl::Status s = ReadRestRows(t, track, p.spans, p.cover_span, &w->scratch, &w->merge_tmp, &w->rows); !s.ok()) return s;
  w->events += w->rows.size();
  if (!w->rows.empty()) AddTrackRows(track, w->rows, p.a, p.b, w->outside, &w->tally);
  return absl::OkStatus();
}

// Samples in [a, b] and the one before a, whose value holds at a (the
// window's carried sample).
absl::Status CounterTrack(const Table& t, const Plan& p, uint32_t track, Worker* w) {
  if (absl::Status s = ReadAggregates(t, track, p.cover, &w->tally, &w->outside, &w->buckets); !s.ok()) return s;
  RangeAgg samples;
  if (FirstSample(t.resources().tracks(static_cast<int>(track))) < p.a) samples.count = 1;
  const int64_t lo = p.cover.empty() ? p.b : p.cover_span.lo, hi = p.cover.empty() ? p.b : p.cover_span.hi;
  for (const auto& [from, to] : {std::pair{p.a, lo - 1}, std::pair{hi, p.b}}) {
    absl::StatusOr<uint64_t> n = CountSamples(t, track, from, to, &w->scratch);
    if (!n.ok()) return n.status();
    samples.count += *n;
  }
  w->events += samples.count;
  if (samples.count > 0) w->tally.AddTrack(track, samples);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RangeStats> RangeStatsFromIndex(const Table& t, const std::vector<uint32_t>& tracks, int64_t a,
                                               int64_t b) {
  const proto::StatsIndexInfo& info = t.meta().stats_index();
  Plan p;
  p.grid = StatsGrid{t.meta().min_ts(), info.bucket_log2(), info.levels()};
  p.a = a;
  p.b = b;
  std::vector<uint32_t> todo = tracks;
  if (todo.empty()) {
    for (int i = 0; i < t.resources().tracks_size(); ++i) todo.push_back(static_cast<uint32_t>(i));
  }
  RangeStats out;
  out.covered_to = b;
  if (b < a) return out;
  // No event ends past max_end (or starts before min_ts): a range reaching
  // past the span holds the buckets sticking out of it wholly, so the whole
  // span is one top bucket.
  const BucketId top{p.grid.levels - 1, 0};
  p.cover = CoverBuckets(p.grid, a <= p.grid.min_ts ? p.grid.min_ts : a,
                         b >= t.meta().max_end() ? BucketEnd(p.grid, top) : b);
  p.spans = RestSpans(p.grid, p.cover, a, b);
  p.cover_span.grid = &p.grid;
  p.cover_span.any = !p.cover.empty();
  if (p.cover_span.any) {
    p.cover_span.lo = BucketStart(p.grid, p.cover.front());
    p.cover_span.hi = BucketEnd(p.grid, p.cover.back());
  }
  // Tracks are independent: each worker answers whole tracks into a tally
  // of its own, and the tallies are merged at the end.
  const int threads = static_cast<int>(std::min<size_t>(todo.size(), static_cast<size_t>(QueryThreads())));
  std::vector<Worker> workers;
  workers.reserve(static_cast<size_t>(std::max(threads, 1)));
  for (int i = 0; i < std::max(threads, 1); ++i) workers.emplace_back(NumStrings(t));
  std::vector<absl::Status> errors(workers.size());
  std::atomic<size_t> next{0};
  ParallelFor(workers.size(), threads, [&](size_t wi) {
    Worker& w = workers[wi];
    for (size_t i = next.fetch_add(1); i < todo.size(); i = next.fetch_add(1)) {
      const uint32_t track = todo[i];
      if (track >= static_cast<uint32_t>(t.resources().tracks_size())) {
        errors[wi] = absl::InvalidArgumentError(absl::StrCat("no track ", track));
      } else {
        errors[wi] = IsCounter(t, track) ? CounterTrack(t, p, track, &w) : SliceTrack(t, p, track, &w);
      }
      if (!errors[wi].ok()) return;
    }
  });
  for (const absl::Status& s : errors) {
    if (!s.ok()) return s;
  }
  for (size_t i = 1; i < workers.size(); ++i) workers[0].tally.Merge(workers[i].tally);
  for (const Worker& w : workers) out.events += w.events;
  workers[0].tally.MoveInto(&out);
  return out;
}

}  // namespace tracetable
