// TrackPool: builds the tiles of many tracks on worker threads.
//
// The caller streams the sorted records (TrackTimeLess order) from one merge
// on one thread. Each track goes whole to one worker, the one with the least
// work queued when the track starts; the worker's TrackWriter lays out lanes
// and summaries, its own sorter orders the track's events by storage level,
// and when the track ends the worker writes its event tiles. Tracks share
// nothing but the table's files: each worker writes its tracks' tiles in key
// order into files of its own (store/sorted_runs.h), so the table's content
// does not depend on which worker built which track.
//
// Memory: at most `queued_bytes` of records wait per worker; a worker's event
// sorter holds `placed_records` records before it spills a run.
//
// Errors: the first failure (a worker's or the caller's Cancel) stops every
// worker; Add() and Finish() then return it. Finish() must be called once
// (the destructor joins the workers if it was not).
#ifndef TRACETABLE_STORE_TRACK_POOL_H_
#define TRACETABLE_STORE_TRACK_POOL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "format/tracetable.pb.h"
#include "store/flow_index_writer.h"
#include "store/stats_index_writer.h"
#include "store/search_index_writer.h"
#include "store/sort_record.h"

namespace tracetable {

class SortedRuns;

struct TrackPoolOptions {
  int threads = 2;
  int num_levels = 1;
  int64_t min_ts = 0;                // the table's time base
  size_t placed_records = 1 << 20;   // per worker, before spilling
  // Records waiting per worker. Tracks come whole from one merge, so the
  // merge reaches the next track (for another worker) only once this one's
  // records are all queued: room for a big track keeps both workers busy
  // (10M events, 16 tracks of 524k: 1.45 -> ~1.75 busy cores at 16-32 MiB).
  size_t queued_bytes = 4 << 20;
  std::string spill_prefix;          // worker w spills to "<prefix><w>"
  SortedRuns* runs = nullptr;
  // Per worker: a track's summary tiles (and statistics buckets) held until
  // its event tiles are written, so they follow them in key order.
  size_t held_bytes = 16 << 20;
  // Per-track statistics are written into resources->tracks(id); the worker
  // building a track is the only one touching it.
  proto::ResourceTable* resources = nullptr;
  // Sees every events tile (from every worker) when set.
  SearchIndexWriter* search_index = nullptr;
  FlowIndexWriter* flow_index = nullptr;
  // Range statistics aggregates are written on this grid when set
  // (store/stats_index_writer.h).
  std::optional<StatsGrid> stats_grid;
};

struct TrackPoolStats {
  uint64_t events = 0;
  uint64_t tiles = 0;
  uint64_t tile_bytes = 0;
  uint64_t stats_buckets = 0;
  uint64_t stats_bytes = 0;
};

class TrackPool {
 public:
  explicit TrackPool(TrackPoolOptions options);
  ~TrackPool();
  TrackPool(const TrackPool&) = delete;
  TrackPool& operator=(const TrackPool&) = delete;

  // Records must come in TrackTimeLess order.
  absl::Status Add(const SortRecord& r);
  // Stops the workers with `status` (e.g. a cancelled ingest).
  void Cancel(absl::Status status);
  // Hands over the last track, waits for the workers, and returns the first
  // error, if any.
  absl::Status Finish();
  // Valid after Finish().
  const TrackPoolStats& stats() const { return stats_; }

 private:
  class Worker;
  struct Shared;

  void Submit(bool last);

  TrackPoolOptions options_;
  std::unique_ptr<Shared> shared_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<SortRecord> batch_;  // records of the current track not yet handed over
  Worker* current_ = nullptr;      // the worker building the current track
  uint32_t track_ = 0;
  uint64_t ordinal_ = 0;  // tracks handed out so far
  bool finished_ = false;
  TrackPoolStats stats_;
};

}  // namespace tracetable

#endif  // TRACETABLE_STORE_TRACK_POOL_H_
