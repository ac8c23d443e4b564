// TrackPool: builds the tiles of many tracks on worker threads.
//
// Run() is given the tracks (in key order, with their sizes) and a function
// that reads one track's sorted records (TrackTimeLess order). Each worker
// takes the biggest track not yet taken, reads it whole and builds it: its
// TrackWriter lays out lanes and summaries and places each event at its
// storage level; each level's events are cut into tiles as soon as no later
// event of the level can start before them (PlacedLevels::ReleaseBefore),
// and when the track ends the worker writes its event tiles, level after
// level. Biggest first, so the last track to finish is a
// small one and no worker waits behind another's big track. Tracks share
// nothing but the table's files: each worker writes its tracks' tiles in
// key order into files of its own (store/sorted_runs.h), so the table's
// content does not depend on which worker built which track, nor when.
//
// Memory: a worker holds at most `placed_records` placed events not yet
// cut into tiles (past that they go to its sorter, which spills runs) and
// `placed_records` * sizeof(PlacedRecord) bytes of a track's encoded tiles
// (past that they wait in files per level, store/level_tiles.h).
//
// Errors: the first failure (a worker's, a read's or the tick's) stops every
// worker, and Run() returns it. Run() is called once.
#ifndef TRACETABLE_STORE_TRACK_POOL_H_
#define TRACETABLE_STORE_TRACK_POOL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
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

  struct Track {
    uint32_t id = 0;
    uint64_t records = 0;
  };
  // Takes a track's records, in order, a span at a time.
  using EmitFn = std::function<absl::Status(absl::Span<const SortRecord>)>;
  // Reads tracks[index] whole into emit; called on the workers, for
  // different tracks at once.
  using ReadFn = std::function<absl::Status(size_t index, const EmitFn& emit)>;
  // Called on the calling thread about every 100 ms with the records built
  // so far; an error stops the build (e.g. a cancelled ingest).
  using TickFn = std::function<absl::Status(uint64_t done)>;

  // `tracks` in key order (TrackTimeLess), each with its record count.
  absl::Status Run(const std::vector<Track>& tracks, const ReadFn& read, const TickFn& tick);
  // Valid after Run().
  const TrackPoolStats& stats() const { return stats_; }

 private:
  class Worker;
  struct Shared;

  TrackPoolOptions options_;
  std::unique_ptr<Shared> shared_;
  TrackPoolStats stats_;
};

}  // namespace tracetable

#endif  // TRACETABLE_STORE_TRACK_POOL_H_
