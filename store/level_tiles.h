// LevelTiles: one track's encoded event tiles, kept per storage level until
// the track ends. They are made as each level's events become final, all
// levels at once, but the track's file wants them level after level (keys
// order by level, then start). Up to `limit` bytes over all levels wait in
// memory; past that, every level's waiting tiles are appended to a
// temporary file of that level ("<spill_prefix>.L<level>"), which Drain()
// reads back before the level's tiles still in memory. Files are removed
// when drained and when the LevelTiles dies.
//
// Not thread-safe: one per worker.
#ifndef TRACETABLE_STORE_LEVEL_TILES_H_
#define TRACETABLE_STORE_LEVEL_TILES_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "store/external_sorter.h"

namespace tracetable {

class LevelTiles {
 public:
  using PutFn = std::function<absl::Status(std::string key, std::string value)>;

  LevelTiles(std::string spill_prefix, size_t limit) : spill_prefix_(std::move(spill_prefix)), limit_(limit) {}
  ~LevelTiles();
  LevelTiles(const LevelTiles&) = delete;
  LevelTiles& operator=(const LevelTiles&) = delete;

  // A tile of `level`, after the level's earlier ones.
  absl::Status Add(uint32_t level, std::string key, std::string value);

  // Puts every tile, level by level, each level's in the order added; then
  // holds none (and no file).
  absl::Status Drain(const PutFn& put);

  // Bytes written to files so far (over all tracks).
  uint64_t spilled_bytes() const { return spilled_bytes_; }

 private:
  struct Level {
    std::vector<std::pair<std::string, std::string>> tiles;
    sorter_internal::File file;  // tiles spilled before those in memory, if any
    std::string path;
  };
  absl::Status Spill();
  absl::Status ReadBack(Level& level, const PutFn& put);

  std::string spill_prefix_;
  size_t limit_;
  size_t bytes_ = 0;  // of the tiles in memory
  uint64_t spilled_bytes_ = 0;
  std::vector<Level> levels_;
};

}  // namespace tracetable

#endif  // TRACETABLE_STORE_LEVEL_TILES_H_
