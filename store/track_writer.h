// Turns the time-sorted events of one track into tiles.
//
// Summaries: every level k >= 1 groups, per bin of Resolution(k) and per
// (kind, lane), the events shorter than Resolution(k); the levels that
// HasSummaryTiles (format/levels.h) write the groups as summary tiles.
// They are built bottom-up: a closed bin of level k is folded into level
// k + 1, so each event is aggregated once, not once per level.
//
// Events are stored once, at their storage level: the highest level at which
// the event is still alone in its summary group (or its duration class, if
// it is not alone even there). A query at level L reads the events stored at
// levels >= L: those long enough to be drawn, and the short ones that are
// alone in their group at L and so stand for themselves. Summary tiles keep
// only groups of two or more events. An event's storage level is known only
// when its group gains a second member or its bin closes, so events are
// handed to `place` (an external sort) instead of being written here.
//
// Counter tracks keep all samples at level 0 and, per bin of each level, the
// first, min, max and last sample.
#ifndef TRACETABLE_STORE_TRACK_WRITER_H_
#define TRACETABLE_STORE_TRACK_WRITER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "format/lane_layout.h"
#include "format/nest_layout.h"
#include "format/tile_codec.h"
#include "format/tracetable.pb.h"
#include "store/sort_record.h"

namespace tracetable {

class TrackWriter {
 public:
  using PutFn = std::function<absl::Status(std::string key, std::string value)>;
  using PlaceFn = std::function<absl::Status(const TileRow& row, int level)>;

  // min_ts: the table's time base; tile keys hold starts relative to it.
  TrackWriter(uint32_t track, bool counter, int num_levels, int64_t min_ts,
              PutFn put, PlaceFn place);

  // Sees every row, with its lane, as it is added (store/stats_index_writer.h).
  using ObserveFn = std::function<absl::Status(const TileRow& row)>;
  void set_observer(ObserveFn observe) { observe_ = std::move(observe); }

  // Records must come in TrackTimeLess order.
  absl::Status Add(const SortRecord& r);
  // Flushes everything and fills the track's statistics.
  absl::Status Finish(proto::Track* stats);

 private:
  struct Level {
    int64_t bin = -1;       // open bin index, -1 if none
    int64_t bin_end = 0;    // first ts past the open bin
    // The open bin's aggregates, one per (kind group, lane), and where each
    // key's is: a bin closes about once per event at the finest levels, so
    // its rows are sorted where they lie rather than copied out of a map,
    // and most lanes are found by index rather than by hash.
    std::vector<TileRow> open;
    std::vector<uint32_t> open_near;  // [lane * kKindGroups + group], lanes < kNearLanes
    absl::flat_hash_map<uint64_t, uint32_t> open_far;
    std::vector<TileRow> counter_open;            // counters: candidate samples
    std::vector<TileRow> rows;                    // rows of the open tile
  };

  static constexpr uint32_t kKindGroups = 3;  // KindGroup's values
  static constexpr uint32_t kNearLanes = 4096;
  static constexpr uint32_t kNoRow = UINT32_MAX;
  // The slot holding where the open bin's (group, lane) aggregate is in
  // level.open, kNoRow if it has none.
  static uint32_t* OpenSlot(Level& level, uint32_t group, uint32_t lane);

  absl::Status CloseBinsBefore(int64_t ts);
  absl::Status Insert(int level, const TileRow& item);
  absl::Status CloseBin(int level);
  absl::Status CloseCounterBin(int level, std::vector<TileRow>& candidates);
  absl::Status AppendRow(int section_level, bool summary, const TileRow& row);
  absl::Status FlushTile(int section_level, bool summary);
  absl::Status Place(const TileRow& row, int level);

  uint32_t track_;
  bool counter_;
  int num_levels_;
  int64_t min_ts_;
  PutFn put_;
  PlaceFn place_;
  ObserveFn observe_;
  LaneLayout layout_;  // thread tracks
  NestLayout nests_;   // async tracks: nested by id
  std::vector<Level> event_tiles_;  // per class: the open tile's rows
  std::vector<Level> levels_;       // per level: bins + summary tile
  std::vector<proto::ClassExtent> extents_;
  uint64_t num_events_ = 0;
};

}  // namespace tracetable

#endif  // TRACETABLE_STORE_TRACK_WRITER_H_
