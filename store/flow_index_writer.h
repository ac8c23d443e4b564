// FlowIndexWriter: builds the flow index of a table while its event tiles
// are written (keys "F", docs/format.md), so that every binding of one flow
// id is found by one read and a few tile reads, whatever the table's size.
//
// For each distinct flow id in an events tile — the id of a flow event
// (s/t/f) or the bind id of a slice's flow_out/flow_in — a posting (id,
// tile) goes through an external sort; Finish() writes the postings of
// 256 consecutive string ids per key, ascending by id, then tile key. A
// posting names its tile by an index into the tiles seen (8 bytes, not a
// key's 24), made its rank in key order before the sort.
//
// AddTile() may be called from several threads (store/track_pool.h).
// Finish() writes its blocks on as many threads as it is given writers,
// each a run of whole blocks: a block is one group of the sorter
// (store/external_sorter.h), read on its own. Kineto 10M's 3M postings took
// 0.17 s on one thread at the end of an ingest, the other core idle.
// Memory: postings are bounded by the given budget (they spill); the tiles
// holding flows are held, 16 bytes each.
#ifndef TRACETABLE_STORE_FLOW_INDEX_WRITER_H_
#define TRACETABLE_STORE_FLOW_INDEX_WRITER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "format/keys.h"
#include "format/tile_codec.h"
#include "format/tracetable.pb.h"
#include "store/external_sorter.h"

namespace tracetable {

class FlowIndexWriter {
 public:
  using PutFn = std::function<absl::Status(std::string key, std::string value)>;

  // Spill files are named `spill_prefix`.*; at most `memory_bytes` of
  // postings are buffered.
  FlowIndexWriter(std::string spill_prefix, size_t memory_bytes);

  // Buffers up to `bytes` of postings; only before the first AddTile().
  absl::Status SetMemory(size_t bytes) { return sorter_->SetMaxRecords(bytes / sizeof(Posting)); }

  // `rows` are the rows of the events tile `key`.
  absl::Status AddTile(const TileKey& key, const std::vector<TileRow>& rows);

  // Writes the blocks through `puts`, a run of consecutive blocks through
  // each (puts[p] on a thread of its own, puts[0] on the caller's; every
  // writer's keys ascend), and describes the index in `info`. `read_budget`
  // bounds the read buffers of spilled postings.
  absl::Status Finish(size_t read_budget, const std::vector<PutFn>& puts, proto::FlowIndexInfo* info);

  struct Posting {
    uint32_t flow;
    uint32_t tile;  // index in tiles_ (AddTile order); Finish() may make it the rank
  };

 private:
  // An events tile holding a flow, as in its key.
  struct Tile {
    uint64_t start;
    uint32_t track;
    uint32_t level;
  };
  // By flow, then tile: one 64-bit key, so the sorter sorts by radix
  // (3M postings of 24 bytes by comparison: 80 ms on two cores), and
  // grouped by block, so each block's postings are read on their own.
  struct PostingOrder {
    static uint64_t Key(const Posting& p) { return uint64_t{p.flow} << 32 | p.tile; }
    static uint64_t Group(const Posting& p) { return p.flow >> kFlowBlockShift; }
    bool operator()(const Posting& a, const Posting& b) const { return Key(a) < Key(b); }
  };
  using Sorter = ExternalSorter<Posting, PostingOrder>;
  // What one writer's blocks added to the index.
  struct PartInfo {
    uint64_t blocks = 0;
    uint64_t bytes = 0;
    uint64_t flows = 0;
  };

  // `rank_of[t]` is tile t's place in tile key order; postings hold ranks
  // already when `as_ranks`.
  absl::Status WriteBlock(const Sorter::Group& group, size_t buffer_records, const std::vector<uint32_t>& by_rank,
                          const std::vector<uint32_t>& rank_of, bool as_ranks, const PutFn& put, PartInfo* info);

  std::mutex mu_;  // guards sorter_ and tiles_ during AddTile
  std::unique_ptr<Sorter> sorter_;
  std::vector<Tile> tiles_;
};

}  // namespace tracetable

#endif  // TRACETABLE_STORE_FLOW_INDEX_WRITER_H_
