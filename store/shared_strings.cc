#include "store/shared_strings.h"

#include "absl/hash/hash.h"

namespace tracetable {

SharedStrings::SharedStrings() {
  static_assert(kShards == 16, "Intern takes the shard from the hash's top 4 bits");
  // "" is id 0 as in every string table: shard 0, first text.
  Shard& s = shards_[0];
  s.texts.emplace_back();
  s.ids.emplace(std::string_view(s.texts.back()), 0);
}

uint32_t SharedStrings::Intern(std::string_view text) {
  // The top bits: the shard's map places keys by the others.
  const uint32_t shard = text.empty() ? 0 : static_cast<uint32_t>(absl::HashOf(text) >> 60);
  Shard& s = shards_[shard];
  std::lock_guard<std::mutex> lock(s.mu);
  if (auto it = s.ids.find(text); it != s.ids.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(s.texts.size()) * kShards + shard;
  s.texts.emplace_back(text);
  s.ids.emplace(std::string_view(s.texts.back()), id);
  return id;
}

std::string_view SharedStrings::Text(uint32_t id) {
  Shard& s = shards_[id % kShards];
  std::lock_guard<std::mutex> lock(s.mu);
  return s.texts[id / kShards];
}

}  // namespace tracetable
