#include "query/run_range_stats.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "query/range_stats_exact.h"
#include "query/range_stats_index.h"
#include "store/run_shards.h"

namespace tracetable {
namespace {

bool FromAggregates(const Table& t, const RunShardMap& s) {
  return s.stats_index && !(s.incomplete && s.max_end + s.time_offset < t.meta().max_end());
}

// Whether global track `track` is answered by its shard's aggregates.
bool Routed(const Table& t, uint32_t track) {
  const RunShards& run = *t.run();
  const RunShards::TrackHome& h = run.home(track);
  return h.local != UINT32_MAX && FromAggregates(t, run.shards()[h.shard]);
}

std::vector<uint32_t> AllTracks(const Table& t, const std::vector<uint32_t>& tracks) {
  if (!tracks.empty()) return tracks;
  std::vector<uint32_t> all(static_cast<size_t>(t.resources().tracks_size()));
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint32_t>(i);
  return all;
}

uint32_t Map(const std::vector<uint32_t>& m, uint32_t id) { return id < m.size() ? m[id] : 0; }

// Shard `i`'s answer for its `local` tracks over [a, b] (run times), folded
// into `tally` in the run's numbers.
absl::Status AddShard(const RunShards& run, size_t i, const std::vector<uint32_t>& local, int64_t a, int64_t b,
                      StatsTally* tally, uint64_t* events) {
  const RunShardMap& s = run.shards()[i];
  absl::StatusOr<std::shared_ptr<const Table>> shard = run.Acquire(i);
  if (!shard.ok()) return shard.status();
  if (!(*shard)->meta().has_stats_index()) {
    // Acquire checked its identity: the metadata the run was opened with said otherwise.
    return run.Named(i, absl::FailedPreconditionError("the shard has no range aggregates; reopen the run"));
  }
  absl::StatusOr<RangeStats> r = RangeStatsFromIndex(**shard, local, a - s.time_offset, b - s.time_offset);
  if (!r.ok()) return run.Named(i, r.status());
  *events += r->events;
  for (const auto& [name, agg] : r->names) tally->AddName(Map(s.strings, name), agg);
  for (const auto& [track, agg] : r->tracks) tally->AddTrack(Map(s.tracks, track), agg);
  return absl::OkStatus();
}

}  // namespace

bool RunAnswersFromAggregates(const Table& t, const std::vector<uint32_t>& tracks) {
  for (uint32_t track : AllTracks(t, tracks)) {
    if (track >= static_cast<uint32_t>(t.resources().tracks_size()) || !Routed(t, track)) return false;
  }
  return true;
}

absl::StatusOr<RangeStats> RunRangeStats(const Table& t, const std::vector<uint32_t>& tracks, int64_t start,
                                         int64_t end, uint64_t cap) {
  const RunShards& run = *t.run();
  std::vector<std::vector<uint32_t>> local(run.shards().size());
  std::vector<uint32_t> rest;
  for (uint32_t track : AllTracks(t, tracks)) {
    if (track >= static_cast<uint32_t>(t.resources().tracks_size())) {
      return absl::InvalidArgumentError(absl::StrCat("no track ", track));
    }
    if (Routed(t, track)) {
      local[run.home(track).shard].push_back(run.home(track).local);
    } else {
      rest.push_back(track);
    }
  }
  RangeStats out;
  out.covered_to = end;
  if (end < start) return out;
  StatsTally tally(t.num_strings());
  if (!rest.empty()) {
    absl::StatusOr<RangeStats> r = RangeStatsFromEvents(t, rest, start, end, cap);
    if (!r.ok()) return r.status();
    out.events = r->events;
    out.truncated = r->truncated;
    out.covered_to = r->covered_to;
    for (const auto& [name, agg] : r->names) tally.AddName(name, agg);
    for (const auto& [track, agg] : r->tracks) tally.AddTrack(track, agg);
  }
  for (size_t i = 0; i < local.size(); ++i) {
    if (local[i].empty()) continue;
    if (absl::Status s = AddShard(run, i, local[i], start, out.covered_to, &tally, &out.events); !s.ok()) return s;
  }
  tally.MoveInto(&out);
  return out;
}

}  // namespace tracetable
