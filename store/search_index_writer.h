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
// the ones after, never earlier ones.
//
// AddTile() may be called from several threads (store/track_pool.h): the
// directory's order comes from sorting, not from the order of the calls.
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

#include "absl/container/flat_hash_set.h"
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

  // `rows` are the rows of the events tile `key`, in tile order.
  absl::Status AddTile(const TileKey& key, int64_t tile_start, const std::vector<TileRow>& rows);

  // Writes the directory and every chunk through `put` and describes the
  // index in `info`. `read_budget` bounds the merge's read buffers.
  absl::Status Finish(size_t read_budget, const PutFn& put, proto::SearchIndexInfo* info);

  struct Posting {
    uint32_t name;
    uint32_t tile;  // index in tiles_ (AddTile order)
  };

 private:
  struct Tile {
    uint64_t start;  // as in the tile key
    uint64_t reach;  // latest end of its rows - start
    uint64_t last;   // latest ts of its rows - start
    uint32_t track;
    uint32_t level;
  };

  absl::Status WriteDirectory(const std::vector<uint32_t>& by_rank, const PutFn& put,
                              proto::SearchIndexInfo* info);

  std::mutex mu_;  // guards sorter_ and tiles_ during AddTile
  // By name, then tile: the order of one 64-bit key, so the sorter sorts by
  // radix (external_sorter.h).
  struct PostingOrder {
    static uint64_t Key(const Posting& p) { return uint64_t{p.name} << 32 | p.tile; }
    bool operator()(const Posting& a, const Posting& b) const { return Key(a) < Key(b); }
  };
  std::unique_ptr<ExternalSorter<Posting, PostingOrder>> sorter_;
  std::vector<Tile> tiles_;
};

}  // namespace tracetable

#endif  // TRACETABLE_STORE_SEARCH_INDEX_WRITER_H_
