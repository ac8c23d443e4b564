#include "format/keys.h"

namespace tracetable {

void PutBigEndian32(std::string* dst, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) dst->push_back(static_cast<char>(v >> shift));
}

void PutBigEndian64(std::string* dst, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) dst->push_back(static_cast<char>(v >> shift));
}

uint32_t GetBigEndian32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

uint64_t GetBigEndian64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

std::string StringChunkKey(uint32_t chunk) {
  std::string key(1, kStringPrefix);
  PutBigEndian32(&key, chunk);
  return key;
}

std::string ArgsBlockKey(uint64_t block) {
  std::string key(1, kArgsPrefix);
  PutBigEndian64(&key, block);
  return key;
}

std::string ThreadTimeBlockKey(uint64_t block) {
  std::string key(1, kThreadTimePrefix);
  PutBigEndian64(&key, block);
  return key;
}

std::string SearchNamePrefix(uint32_t name) {
  std::string key(1, kSearchPrefix);
  PutBigEndian32(&key, name);
  return key;
}

std::string SearchChunkKey(uint32_t name, uint32_t rank) {
  std::string key = SearchNamePrefix(name);
  PutBigEndian32(&key, rank);
  return key;
}

std::string SearchGroupKey(uint32_t group) {
  std::string key(1, kSearchGroupPrefix);
  PutBigEndian32(&key, group);
  return key;
}

std::string MemorySegmentKey(uint32_t id, uint32_t segment) {
  std::string key(1, kMemorySegmentPrefix);
  PutBigEndian32(&key, id);
  PutBigEndian32(&key, segment);
  return key;
}

std::string FlowBlockKey(uint32_t block) {
  std::string key(1, kFlowPrefix);
  PutBigEndian32(&key, block);
  return key;
}

std::string SearchTilesKey(uint32_t block) {
  std::string key(1, kSearchTilesPrefix);
  PutBigEndian32(&key, block);
  return key;
}

std::string EncodeTileKey(const TileKey& k) {
  std::string key(1, kTilePrefix);
  key.reserve(15);
  PutBigEndian32(&key, k.track);
  key.push_back(static_cast<char>(k.section));
  key.push_back(static_cast<char>(k.level));
  PutBigEndian64(&key, k.start);
  return key;
}

bool DecodeTileKey(std::string_view key, TileKey* out) {
  if (key.size() != 15 || key[0] != kTilePrefix) return false;
  char section = key[5];
  if (section != static_cast<char>(TileSection::kEvents) &&
      section != static_cast<char>(TileSection::kSummaries)) {
    return false;
  }
  out->track = GetBigEndian32(key.data() + 1);
  out->section = static_cast<TileSection>(section);
  out->level = static_cast<uint8_t>(key[6]);
  out->start = GetBigEndian64(key.data() + 7);
  return true;
}

}  // namespace tracetable
