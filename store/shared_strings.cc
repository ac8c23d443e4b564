#include "store/shared_strings.h"

#include <cstring>

namespace tracetable {
namespace {

// Texts are copied into blocks of this size (a longer text gets its own):
// no allocation, and no 32-byte std::string, per string.
constexpr size_t kBlockBytes = 64 << 10;

// A shard adds what its new texts cost to bytes() in steps of this much.
constexpr size_t kChargeStep = 4 << 10;

// The value of a decimal text as a number prints it, 0|[1-9][0-9]{0,18}:
// the value then gives the text back, so equal values are equal texts.
bool DecimalValue(std::string_view s, uint64_t* value) {
  if (s.empty() || s.size() > 19 || (s[0] == '0' && s.size() > 1)) return false;
  uint64_t v = 0;
  for (char c : s) {
    const unsigned d = static_cast<unsigned char>(c) - '0';
    if (d > 9) return false;
    v = v * 10 + d;
  }
  *value = v;
  return true;
}

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
  // A trace's millions of flow ids are mostly numbers: found by value, a
  // lookup reads no text (three fewer cache misses).
  if (uint64_t value; DecimalValue(text, &value)) return InternNumber(value, text, stored);
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
  ChargeNewText(s);
  return index * kShards + shard;
}

uint32_t SharedStrings::InternNumber(uint64_t value, std::string_view text, std::string_view* stored) {
  const uint32_t shard = static_cast<uint32_t>(absl::Hash<uint64_t>{}(value) >> 60);
  Shard& s = shards_[shard];
  std::lock_guard<std::mutex> lock(s.mu);
  auto [it, added] = s.numbers.try_emplace(value, static_cast<uint32_t>(s.texts.size()));
  const uint32_t index = it->second;
  if (added) {
    s.texts.push_back(Store(s, text));
    ChargeNewText(s);
  }
  *stored = s.texts[index];
  return index * kShards + shard;
}

void SharedStrings::ChargeNewText(Shard& s) {
  // A slot is 4 bytes (a number's 16) and a control byte; a view 16 (the
  // deque has no slack).
  const size_t set_bytes = s.ids.capacity() * (sizeof(uint32_t) + 1) +
                           s.numbers.capacity() * (sizeof(std::pair<uint64_t, uint32_t>) + 1);
  s.uncharged += set_bytes - s.set_bytes + sizeof(std::string_view);
  s.set_bytes = set_bytes;
  // One counter written by every thread for every new text would bounce
  // its cache line between cores (a third of a new id's time): steps.
  if (s.uncharged >= kChargeStep) {
    Charge(static_cast<int64_t>(s.uncharged));
    s.uncharged = 0;
  }
}

std::string_view SharedStrings::Text(uint32_t id) {
  Shard& s = shards_[id % kShards];
  std::lock_guard<std::mutex> lock(s.mu);
  return s.texts[id / kShards];
}

}  // namespace tracetable
