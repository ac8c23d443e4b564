// The compact tile layout (version 2, docs/api.md "tile"): the same answer
// as the aligned layout (version 1, tiles.h), fewer bytes before and after
// gzip, for viewers that decode it anyway.
//
// Contract: PackTileAnswer turns a version-1 answer into version 2 and
// UnpackTileAnswer turns it back into exactly the same version-1 bytes
// (a bijection on valid answers). Version 2 keeps the header and the
// strings; the item columns become LEB128 varints: times divided by the
// largest common unit (header word 60), starts as deltas within a track,
// ids as deltas between the events of a track, and the counter value, the
// id and the summaries' covered/longest times only where they say
// something (bits of the kind byte). Both reject any answer whose lengths
// or values do not add up (a damaged answer is an error, never rows).
#ifndef TRACETABLE_QUERY_TILE_PACK_H_
#define TRACETABLE_QUERY_TILE_PACK_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tracetable {

inline constexpr uint32_t kTileCompactVersion = 2;

absl::StatusOr<std::string> PackTileAnswer(std::string_view v1);
absl::StatusOr<std::string> UnpackTileAnswer(std::string_view v2);

}  // namespace tracetable

#endif  // TRACETABLE_QUERY_TILE_PACK_H_
