#include "store/level_tiles.h"

#include <cstdio>

#include "absl/strings/str_cat.h"

namespace tracetable {
namespace {

// A spilled tile: key and value lengths, then their bytes.
struct Frame {
  uint32_t key_size;
  uint32_t value_size;
};

}  // namespace

LevelTiles::~LevelTiles() {
  for (Level& l : levels_) {
    if (!l.file) continue;
    l.file.reset();
    std::remove(l.path.c_str());
  }
}

absl::Status LevelTiles::Add(uint32_t level, std::string key, std::string value) {
  if (level >= levels_.size()) levels_.resize(level + 1);
  bytes_ += key.size() + value.size();
  levels_[level].tiles.emplace_back(std::move(key), std::move(value));
  return bytes_ < limit_ ? absl::OkStatus() : Spill();
}

absl::Status LevelTiles::Spill() {
  for (size_t i = 0; i < levels_.size(); ++i) {
    Level& l = levels_[i];
    if (l.tiles.empty()) continue;
    if (!l.file) {
      l.path = absl::StrCat(spill_prefix_, ".L", i);
      l.file.reset(std::fopen(l.path.c_str(), "w+b"));
      if (!l.file) return sorter_internal::IoError("cannot create spill file", l.path);
    }
    for (const auto& [key, value] : l.tiles) {
      const Frame f{static_cast<uint32_t>(key.size()), static_cast<uint32_t>(value.size())};
      if (std::fwrite(&f, sizeof(f), 1, l.file.get()) != 1 ||
          std::fwrite(key.data(), 1, key.size(), l.file.get()) != key.size() ||
          std::fwrite(value.data(), 1, value.size(), l.file.get()) != value.size()) {
        return sorter_internal::IoError("cannot write spill file (disk full?)", l.path);
      }
      spilled_bytes_ += sizeof(f) + key.size() + value.size();
    }
    l.tiles.clear();
  }
  bytes_ = 0;
  return absl::OkStatus();
}

absl::Status LevelTiles::ReadBack(Level& l, const PutFn& put) {
  if (std::fflush(l.file.get()) != 0 || std::fseek(l.file.get(), 0, SEEK_SET) != 0) {
    return sorter_internal::IoError("cannot rewind spill file", l.path);
  }
  Frame f;
  while (std::fread(&f, sizeof(f), 1, l.file.get()) == 1) {
    std::string key(f.key_size, '\0'), value(f.value_size, '\0');
    if (std::fread(key.data(), 1, key.size(), l.file.get()) != key.size() ||
        std::fread(value.data(), 1, value.size(), l.file.get()) != value.size()) {
      return sorter_internal::IoError("cannot read spill file", l.path);
    }
    if (absl::Status s = put(std::move(key), std::move(value)); !s.ok()) return s;
  }
  if (std::ferror(l.file.get())) return sorter_internal::IoError("cannot read spill file", l.path);
  l.file.reset();
  if (std::remove(l.path.c_str()) != 0) return sorter_internal::IoError("cannot remove spill file", l.path);
  return absl::OkStatus();
}

absl::Status LevelTiles::Drain(const PutFn& put) {
  absl::Status st;
  for (Level& l : levels_) {
    if (st.ok() && l.file) st = ReadBack(l, put);
    for (auto& [key, value] : l.tiles) {
      if (st.ok()) st = put(std::move(key), std::move(value));
    }
    l.tiles.clear();
  }
  bytes_ = 0;
  return st;
}

}  // namespace tracetable
