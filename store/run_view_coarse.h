// The coarse tiles of a RUN.view entry: a shard's tiles at its coarsest
// levels, copied byte for byte from the shard, so a run answers its
// whole-run windows without opening a shard (docs/format.md, "`RUN.view`
// bytes", "coarse").
//
// Contract:
//  - For a shard entry with from_level F >= 1, the view holds, for every
//    track of the shard, every tile of the summary sections of levels
//    F..num_levels-1 and of the event sections of classes F..num_levels-1,
//    exactly as the shard stores them (key start and value bytes). A window
//    at level L reads summaries of SummarySource(L) and events of classes
//    >= it (format/levels.h), so every read of a window with
//    SummarySource(L) >= F is answered from here, and any other read goes
//    to the shard: which windows qualify follows from the level they read.
//  - Read() appends what Table::ReadTiles of the shard would (the same
//    tiles, so the same rows and the same ReadStats). The thread times of
//    the events in those event tiles are copied too (Table::ThreadTime),
//    since a window answering an event shows them.
//  - F is the smallest level whose tiles, with those of all coarser levels,
//    fit in a byte budget per shard (kCoarseViewBytesPerShard); a shard
//    whose top level alone exceeds it has none (F = 0).
//  - ParseCoarseTiles checks the framing and every track and level against
//    the shard's metadata; tile bytes are checked by the view's CRC-32 and
//    again by DecodeTile when read (a failure is DataLoss, never rows).
#ifndef TRACETABLE_STORE_RUN_VIEW_COARSE_H_
#define TRACETABLE_STORE_RUN_VIEW_COARSE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "format/keys.h"
#include "format/thread_time_codec.h"
#include "format/tile_codec.h"
#include "format/tracetable.pb.h"
#include "store/table.h"

namespace tracetable {

// Bytes of tile values (and thread times) a view entry may hold per shard,
// so at most ~25 MB more view for 1,000 shards. The generated 20k-event host
// keeps levels 8-10 in ~16 KB (levels 9-10, what its whole-run window reads,
// in ~6 KB; bench/results/2026-11-27-vm-run-view-coarse.md).
inline constexpr size_t kCoarseViewBytesPerShard = 24 << 10;

class CoarseTiles {
 public:
  int from_level() const { return from_level_; }
  // Whether (section, level) of every track is here.
  bool Covers(TileSection section, int level) const {
    return from_level_ > 0 && level >= from_level_ && level < num_levels_ &&
           (section == TileSection::kEvents || section == TileSection::kSummaries);
  }
  // As the shard's Table::ReadTiles(track, section, level, from, to) (shard
  // times); `min_ts` is the shard's TableMeta.min_ts. Covers() must hold.
  absl::Status Read(uint32_t track, TileSection section, int level, int64_t from, int64_t to, int64_t min_ts,
                    std::vector<TileRow>* rows, ReadStats* stats) const;
  // The thread time of the shard's local event `id` when an event tile here
  // holds it (a window answering that event needs it), else null.
  const ThreadTimeEntry* ThreadTime(uint64_t id) const {
    auto it = thread_times_.find(id);
    return it == thread_times_.end() ? nullptr : &it->second;
  }
  // The encoded field (docs/format.md), as written.
  const std::string& bytes() const { return bytes_; }

 private:
  friend absl::StatusOr<std::shared_ptr<const CoarseTiles>> ParseCoarseTiles(std::string bytes,
                                                                               const proto::TableMeta& meta,
                                                                               const proto::ResourceTable& r);
  struct Tile {
    uint64_t start;
    size_t at, size;  // in bytes_
  };
  static uint64_t Key(uint32_t track, TileSection section, int level) {
    return (uint64_t{track} << 16) | (uint64_t{static_cast<uint8_t>(section)} << 8) | static_cast<uint8_t>(level);
  }
  std::string bytes_;
  int from_level_ = 0, num_levels_ = 0;
  absl::flat_hash_map<uint64_t, std::vector<Tile>> sections_;
  absl::flat_hash_map<uint64_t, ThreadTimeEntry> thread_times_;
};

// The coarse field of `shard` (an open table): its tiles of the levels from
// the top down while they fit in `budget` bytes. Empty when none fit. An
// error when the shard is damaged.
absl::StatusOr<std::string> CollectCoarseTiles(const Table& shard, size_t budget = kCoarseViewBytesPerShard);

// Checks and indexes a coarse field; empty bytes give null (none).
absl::StatusOr<std::shared_ptr<const CoarseTiles>> ParseCoarseTiles(std::string bytes, const proto::TableMeta& meta,
                                                                     const proto::ResourceTable& resources);

}  // namespace tracetable

#endif  // TRACETABLE_STORE_RUN_VIEW_COARSE_H_
