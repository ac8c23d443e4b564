#include "store/shared_strings.h"

#include <cstring>

namespace tracetable {
namespace {

// Texts are copied into blocks of this size (a longer text gets its own):
// no allocation, and no 32-byte std::string, per string.
constexpr size_t kBlockBytes = 64 << 10;

}  // namespace

SharedStrings::Shard::Shard() : ids(0, IndexHash{this}, IndexEq{this}) {}

SharedStrings::SharedStrings() {
  static_assert(kShards == 16, "Intern takes the shard from the hash's top 4 bits");
  // "" is id 0 as in every string table: shard 0, first text.
  Shard& s = shards_[0];
  s.texts.emplace_back();
  s.ids.insert(0);
}

std::string_view SharedStrings::Store(Shard& s, std::string_view text) {
  if (text.size() > s.block_left) {
    const size_t n = std::max(kBlockBytes, text.size());
    s.blocks.push_back(std::make_unique<char[]>(n));
    s.block_next = s.blocks.back().get();
    s.block_left = n;
    Charge(static_cast<int64_t>(n));
  }
  if (!text.empty()) std::memcpy(s.block_next, text.data(), text.size());
  std::string_view stored(s.block_next, text.size());
  s.block_next += text.size();
  s.block_left -= text.size();
  return stored;
}

uint32_t SharedStrings::Intern(std::string_view text) {
  std::string_view unused;
  return Intern(text, &unused);
}

uint32_t SharedStrings::Intern(std::string_view text, std::string_view* stored) {
  // The top bits: the shard's set places keys by the others.
  const uint32_t shard = text.empty() ? 0 : static_cast<uint32_t>(TextHash{}(text) >> 60);
  Shard& s = shards_[shard];
  std::lock_guard<std::mutex> lock(s.mu);
  if (auto it = s.ids.find(text); it != s.ids.end()) {
    *stored = s.texts[*it];
    return *it * kShards + shard;
  }
  const uint32_t index = static_cast<uint32_t>(s.texts.size());
  *stored = Store(s, text);
  s.texts.push_back(*stored);
  s.ids.insert(index);
  // A slot is 4 bytes and a control byte; a view 16 (the deque has no slack).
  const size_t set_bytes = s.ids.capacity() * (sizeof(uint32_t) + 1);
  Charge(static_cast<int64_t>(set_bytes - s.set_bytes + sizeof(std::string_view)));
  s.set_bytes = set_bytes;
  return index * kShards + shard;
}

std::string_view SharedStrings::Text(uint32_t id) {
  Shard& s = shards_[id % kShards];
  std::lock_guard<std::mutex> lock(s.mu);
  return s.texts[id / kShards];
}

}  // namespace tracetable
