#include "store/internal_key.h"

#include <cstring>

#include "leveldb/slice.h"

namespace tracetable {
namespace {

constexpr uint64_t kMaxSequence = (uint64_t{1} << 56) - 1;

uint64_t Tag(std::string_view key) {
  uint64_t tag = 0;
  for (int i = 7; i >= 0; --i) tag = (tag << 8) | static_cast<uint8_t>(key[key.size() - 8 + i]);
  return tag;
}

void AppendTag(std::string* out, uint64_t tag) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>(tag >> (8 * i)));
}

class Order : public leveldb::Comparator {
 public:
  int Compare(const leveldb::Slice& a, const leveldb::Slice& b) const override {
    // Keys shorter than a tag only come from damaged files; order them
    // consistently and let the parser report them.
    if (a.size() < 8 || b.size() < 8) return a.compare(b);
    const leveldb::Slice ua(a.data(), a.size() - 8), ub(b.data(), b.size() - 8);
    if (int c = ua.compare(ub); c != 0) return c;
    const uint64_t ta = Tag({a.data(), a.size()}), tb = Tag({b.data(), b.size()});
    return ta > tb ? -1 : ta < tb ? 1 : 0;
  }
  // LevelDB's own name: files written with this order are LevelDB files.
  const char* Name() const override { return "leveldb.InternalKeyComparator"; }
  // Only writers shorten index keys; leaving them whole is always correct.
  void FindShortestSeparator(std::string*, const leveldb::Slice&) const override {}
  void FindShortSuccessor(std::string*) const override {}
};

}  // namespace

bool ParseInternalKey(std::string_view key, ParsedInternalKey* out) {
  if (key.size() < 8) return false;
  const uint64_t tag = Tag(key);
  const uint8_t type = tag & 0xff;
  if (type > 1) return false;
  out->user_key = key.substr(0, key.size() - 8);
  out->sequence = tag >> 8;
  out->is_value = type == 1;
  return true;
}

std::string MakeInternalKey(std::string_view user_key, uint64_t sequence) {
  std::string k(user_key);
  AppendTag(&k, (sequence << 8) | 1);
  return k;
}

std::string SeekKey(std::string_view user_key) {
  std::string k(user_key);
  AppendTag(&k, (kMaxSequence << 8) | 1);
  return k;
}

const leveldb::Comparator* InternalKeyOrder() {
  static Order* order = new Order();
  return order;
}

}  // namespace tracetable
