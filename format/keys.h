// LevelDB keys of a .tracetable. Every integer in a key is big-endian so that
// byte order is numeric order: all tiles of one track sort together, then by
// section, level and start time, so a window on one track is a few
// contiguous range scans. docs/format.md has the byte layout.
#ifndef TRACETABLE_FORMAT_KEYS_H_
#define TRACETABLE_FORMAT_KEYS_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace tracetable {

constexpr char kMetaKey[] = "M";
constexpr char kResourcesKey[] = "R";
constexpr char kStringPrefix = 'S';
constexpr char kTilePrefix = 'T';
constexpr char kArgsPrefix = 'A';
constexpr char kSearchPrefix = 'N';
constexpr char kSearchTilesPrefix = 'D';
constexpr char kSearchGroupPrefix = 'P';
constexpr char kMemorySegmentPrefix = 'Y';
constexpr char kThreadTimePrefix = 'H';
constexpr char kFlowPrefix = 'F';

// A track's tiles come in two sections: events of one duration class, and
// summaries of one zoom level.
enum class TileSection : uint8_t { kEvents = 'E', kSummaries = 'S' };

struct TileKey {
  uint32_t track = 0;
  TileSection section = TileSection::kEvents;
  uint8_t level = 0;
  uint64_t start = 0;  // ts of the tile's first row - TableMeta.min_ts
};

std::string StringChunkKey(uint32_t chunk);
constexpr int kArgsBlockShift = 8;  // 256 event ids per args record
std::string ArgsBlockKey(uint64_t block);
// Thread times of the same 256 ids as ArgsBlockKey(block).
std::string ThreadTimeBlockKey(uint64_t block);
std::string EncodeTileKey(const TileKey& key);
// Search index (store/search_index_writer.h): a chunk of name `name`'s
// postings whose own entries begin at tile rank `rank`, and the 5-byte prefix
// all chunks of `name` share.
std::string SearchChunkKey(uint32_t name, uint32_t rank);
std::string SearchNamePrefix(uint32_t name);
// The postings of the rare names among name ids [group << 6, (group + 1) << 6).
constexpr int kSearchGroupShift = 6;
std::string SearchGroupKey(uint32_t group);
// The search index's tile directory: ranks [block << 10, (block + 1) << 10).
constexpr int kSearchTilesBlockShift = 10;
std::string SearchTilesKey(uint32_t block);
// Memory profile (store/memory_profile_builder.h): segment `segment` of
// memory ID `id` (an index into TableMeta.memory.ids).
std::string MemorySegmentKey(uint32_t id, uint32_t segment);
// Flow index (store/flow_index_writer.h): the tiles of the flow ids
// (format/flow_id.h) [block << 8, (block + 1) << 8).
constexpr int kFlowBlockShift = 8;
std::string FlowBlockKey(uint32_t block);
// False if `key` is not a well-formed tile key.
bool DecodeTileKey(std::string_view key, TileKey* out);

void PutBigEndian32(std::string* dst, uint32_t v);
void PutBigEndian64(std::string* dst, uint64_t v);
uint32_t GetBigEndian32(const char* p);
uint64_t GetBigEndian64(const char* p);

}  // namespace tracetable

#endif  // TRACETABLE_FORMAT_KEYS_H_
