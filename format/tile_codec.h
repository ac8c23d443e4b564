// Encoding of one tile (format/tracetable.proto: Tile) from rows and back.
//
// Rows are columnar and delta-varint coded: ts as zigzag deltas from the
// previous row (the first from the tile start), ids as zigzag deltas, other
// columns as plain varints. Times count units of the tile's time unit (the
// gcd of its offsets and durations: whole ns or us in most traces), and the
// columns with at most 16 distinct values in the tile (cat, lane, kind,
// flags) are bit-packed indexes into those values. A column whose rows all
// hold the default value is left empty, so a tile of plain slices pays
// nothing for flows or counters.
#ifndef TRACETABLE_FORMAT_TILE_CODEC_H_
#define TRACETABLE_FORMAT_TILE_CODEC_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "format/event.h"

namespace tracetable {

// One row of a tile: a stored event, or (count > 1) a summary of `count`
// events. For summaries ts..ts+dur spans the events, name is the longest
// one's, covered sums their durations.
struct TileRow {
  EventKind kind = EventKind::kSlice;
  uint32_t lane = 0;
  int64_t ts = 0;
  int64_t dur = 0;
  uint32_t name = 0;
  uint32_t cat = 0;
  uint32_t flags = 0;
  uint32_t flow_id = 0;
  uint32_t flow_out = 0;
  uint32_t flow_in = 0;
  uint64_t id = 0;
  double value = 0;
  uint64_t count = 1;
  uint64_t covered = 0;
  int64_t longest_dur = 0;
};

// Folds `item` (an event or a summary) into the summary `agg`: span, count,
// covered time, and the longest event's name. The result is a summary, so
// the fields that only an event has are cleared.
void FoldSummary(TileRow* agg, const TileRow& item);

// Serializes rows into a Tile. `summary` tiles carry count/covered/longest.
std::string EncodeTile(const std::vector<TileRow>& rows, int64_t tile_start,
                       bool summary);

// Appends the rows of an encoded tile to `out`. Fails on a value that does
// not parse or whose columns disagree in length.
absl::Status DecodeTile(std::string_view bytes, int64_t tile_start,
                        std::vector<TileRow>* out);

}  // namespace tracetable

#endif  // TRACETABLE_FORMAT_TILE_CODEC_H_
