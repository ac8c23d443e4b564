// Map-style tiles of a table, for viewers that stream.
//
// Contract: tile (level z, index k) of a set of tracks covers the relative
// time range [min_ts + k*W, min_ts + (k+1)*W) with W = kTileBins * R and
// R = TileResolution(z) = 1 ns * 2^z. Its content is exactly QueryWindow's
// answer for that range (end inclusive: start + W - 1) at resolution R and
// those tracks: events at least R long that overlap it (also those that
// start in earlier tiles), summaries of shorter ones grouped by bins of R
// (which nest in the tile grid), counters' first/min/max/last per bin and
// the sample in effect at the tile start, flows and instants. Tiles never
// change for the life of a table, so a (table identity, z, k, tracks) names
// one answer forever (TileETag).
//
// EncodeTileAnswer lays the answer out as the binary documented in docs/api.md
// ("tile"): little-endian columns aligned to their element size, so a page
// maps them onto typed arrays without copying. DecodeTileAnswer reads it back
// and checks every length (a damaged answer is an error, never rows).
#ifndef TRACETABLE_QUERY_TILES_H_
#define TRACETABLE_QUERY_TILES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "query/window.h"
#include "store/table.h"

namespace tracetable {

inline constexpr int64_t kTileBins = 512;
inline constexpr int kMaxTileLevel = 52;    // 1 ns * 2^52 ~ 52 days per bin
inline constexpr size_t kMaxTileTracks = 64;  // per request
inline constexpr uint32_t kTileMagic = 0x31425454;  // "TTB1" little-endian
inline constexpr uint32_t kTileVersion = 1;

constexpr int64_t TileResolution(int z) { return int64_t{1000} << z; }
constexpr int64_t TileWidth(int z) { return kTileBins * TileResolution(z); }

struct TileRequest {
  int level = 0;   // z
  int64_t k = 0;   // tile index from the table's start
  std::vector<uint32_t> tracks;  // at least one, at most kMaxTileTracks
  uint32_t version = kTileVersion;  // layout: 1 aligned, 2 compact (tile_pack.h)
};

// The window request a tile answers (relative ps).
WindowRequest TileWindow(const Table& table, const TileRequest& request);

// Checks the request against the table (level, index inside the span,
// tracks) and answers it.
absl::StatusOr<WindowResult> QueryTile(const Table& table, const TileRequest& request);

// A strong entity tag (quoted) for a tile of this table: the same for the
// same table identity, request and encoding, different otherwise.
std::string TileETag(const Table& table, const TileRequest& request);

// One decoded tile answer: what EncodeTileAnswer wrote, times back in relative ps.
struct DecodedTile {
  int level = 0;
  int64_t start = 0;       // tile start, ps from the table's min_ts
  int64_t width = 0;
  int64_t resolution = 0;
  int64_t bin = 0;
  std::vector<WindowItem> items;  // row.ts relative to min_ts; only the encoded fields
  std::vector<std::pair<uint32_t, std::string>> strings;
};

// The binary answer for `result` (items sorted by track, as QueryWindow
// returns them) in the request's layout version. Fails if a count does not
// fit its column.
absl::StatusOr<std::string> EncodeTileAnswer(const Table& table, const TileRequest& request,
                                             const WindowResult& result);

// Reads either layout version.
absl::StatusOr<DecodedTile> DecodeTileAnswer(std::string_view bytes);

}  // namespace tracetable

#endif  // TRACETABLE_QUERY_TILES_H_
