// SearchIndexWriter: builds the search index of a table while its event
// tiles are written (keys "D" and "N", docs/format.md).
//
// Every events tile holding an indexed event (anything but counter samples
// and empty names) is remembered with its extent; Finish() ranks them in
// (start, track, level) order and writes that directory. For each distinct
// name in such a tile a posting (name, tile) goes through an external sort,
// and Finish() writes each name's postings as ascending tile ranks, chunked;
// a chunk also carries its name's earlier postings whose tile reaches its
// start, so a reader positioned at any time needs the chunk holding it and
// the ones after, never earlier ones. A name in few tiles is written with the
// others of its group of 64 name ids, in one key.
//
// AddTile() may be called from several threads (store/track_pool.h): the
// directory's order comes from sorting, not from the order of the calls.
// Postings are kept in partitions by name range (Partition()), each with
// its own lock and sorter, and Finish() writes the partitions' chunks on
// as many threads through a writer each: their key ranges are disjoint and
// ascending, and each name's chunks are the same whichever partition holds
// it.
//
// Memory: postings are bounded by the given budget (they spill), however
// many distinct names there are; the directory is held in memory at about
// 40 bytes per tile (a tile holds up to 256 events, so ~0.2 B per event for
// dense tracks) and one name's ranks at a time (at most one per tile).
#ifndef TRACETABLE_STORE_SEARCH_INDEX_WRITER_H_
#define TRACETABLE_STORE_SEARCH_INDEX_WRITER_H_

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

class SearchIndexWriter {
 public:
  using PutFn = std::function<absl::Status(std::string key, std::string value)>;

  // Spill files are named `spill_prefix`.*; at most `memory_bytes` of
  // postings are buffered.
  SearchIndexWriter(std::string spill_prefix, size_t memory_bytes);

  // Splits the names into `parts` ranges of about equal weight, from
  // weights[name] (events per name: postings follow them; a name beyond
  // counts 0), each starting at a group of names (kSearchGroupShift). Only before the first AddTile(); without it there is one
  // partition.
  void Partition(const std::vector<uint32_t>& weights, int parts);
  int partitions() const { return static_cast<int>(parts_.size()); }
  // Buffers up to `bytes` of postings from the next Partition() on.
  void SetMemory(size_t bytes) { memory_bytes_ = bytes; }

  // What one calling thread reuses from tile to tile: the tile each name id
  // was last seen in, so a tile's distinct names are found in one pass
  // (4 bytes per name id, grown to the largest seen). Not to be shared
  // between threads.
  class Scratch {
   private:
    friend class SearchIndexWriter;
    std::vector<uint32_t> last_tile_;
    uint32_t tile_ = 0;
    std::vector<uint32_t> names_;
  };

  // `rows` are the rows of the events tile `key`, in tile order.
  absl::Status AddTile(const TileKey& key, int64_t tile_start, const std::vector<TileRow>& rows, Scratch* scratch);

  // Writes the directory through puts[0], partition p's chunks through
  // puts[p] and its name groups through group_puts[p] (one of each per
  // partition, each partition on a thread of its own; every writer's keys
  // ascend), and describes the index in `info`. `read_budget` bounds the
  // merges' read buffers.
  absl::Status Finish(size_t read_budget, const std::vector<PutFn>& puts, const std::vector<PutFn>& group_puts,
                      proto::SearchIndexInfo* info);

  struct Posting {
    uint32_t name;
    uint32_t tile;  // index in tiles_ (AddTile order); WriteChunks may make it the rank
  };

 private:
  struct Tile {
    uint64_t start;  // as in the tile key
    uint64_t reach;  // latest end of its rows - start
    uint64_t last;   // latest ts of its rows - start
    uint32_t track;
    uint32_t level;
  };

  // By name, then tile: the order of one 64-bit key, so the sorter sorts by
  // radix (external_sorter.h).
  struct PostingOrder {
    static uint64_t Key(const Posting& p) { return uint64_t{p.name} << 32 | p.tile; }
    bool operator()(const Posting& a, const Posting& b) const { return Key(a) < Key(b); }
  };
  struct Part {
    uint32_t first_name = 0;  // names from here to the next part's first
    std::mutex mu;            // guards sorter during AddTile
    std::unique_ptr<ExternalSorter<Posting, PostingOrder>> sorter;
  };
  // What one partition's chunks added to the index.
  struct PartInfo {
    uint64_t chunks = 0;
    uint64_t groups = 0;
    uint64_t bytes = 0;
  };

  absl::Status WriteDirectory(const std::vector<uint32_t>& by_rank, const PutFn& put,
                              proto::SearchIndexInfo* info);
  absl::Status WriteChunks(Part& part, size_t read_budget, const std::vector<uint32_t>& by_rank,
                           const std::vector<uint32_t>& rank_of, const PutFn& put, const PutFn& group_put,
                           PartInfo* info);

  std::string spill_prefix_;
  size_t memory_bytes_;
  std::vector<std::unique_ptr<Part>> parts_;
  std::mutex tiles_mu_;  // guards tiles_ during AddTile
  std::vector<Tile> tiles_;
};

}  // namespace tracetable

#endif  // TRACETABLE_STORE_SEARCH_INDEX_WRITER_H_
