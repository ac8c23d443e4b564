// FlowIndexWriter: builds the flow index of a table while its event tiles
// are written (keys "F", docs/format.md), so that every binding of one flow
// id is found by one read and a few tile reads, whatever the table's size.
//
// For each distinct flow id in an events tile — the id of a flow event
// (s/t/f) or the bind id of a slice's flow_out/flow_in — a posting (id,
// tile key) goes through an external sort; Finish() writes the postings of
// 256 consecutive string ids per key, ascending by id, then tile key.
//
// AddTile() may be called from several threads (store/track_pool.h).
// Memory: postings are bounded by the given budget (they spill).
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

  // `rows` are the rows of the events tile `key`.
  absl::Status AddTile(const TileKey& key, const std::vector<TileRow>& rows);

  // Writes every block through `put` and describes the index in `info`.
  // `read_budget` bounds the merge's read buffers.
  absl::Status Finish(size_t read_budget, const PutFn& put, proto::FlowIndexInfo* info);

  struct Posting {
    uint32_t flow;
    uint32_t track;
    uint64_t start;
    uint32_t level;
  };
  static bool PostingLess(const Posting& a, const Posting& b);

 private:
  std::mutex mu_;  // guards sorter_ during AddTile
  // The order as a type: sorts and merges inline it rather than call
  // through a pointer per comparison.
  std::unique_ptr<ExternalSorter<Posting, LessFn<PostingLess>>> sorter_;
};

}  // namespace tracetable

#endif  // TRACETABLE_STORE_FLOW_INDEX_WRITER_H_
