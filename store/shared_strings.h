// SharedStrings: one string table for every thread of an ingest. Parse
// workers intern a string they have not seen before here, once, and hand the
// builder its shared id instead of its text; the builder interns its own
// strings here too, so it keeps no hash map of strings of its own.
//
// Shared ids are given in the order strings first arrive, which differs from
// run to run when several threads intern at once: they are never written.
// The table's string ids are the builder's, given in input order
// (TableBuilder::InternShared), so tables stay the same bytes at any thread
// count.
//
// Contract:
//  - Intern, Text, bytes and Charge may be called from any thread at once.
//  - Intern of equal texts gives one id; id 0 is "".
//  - Text(id), and the view Intern gives, are valid and the same for the
//    table's lifetime (texts live in blocks that never move).
//  - bytes() is the heap this table holds (texts, index, hash sets) plus
//    what others Charge() for tables of strings kept beside it (a
//    producer's cache): a trace of millions of distinct strings (names,
//    or flow ids that are not numbers: format/flow_id.h) grows it by
//    hundreds of MB, which the builder takes out of the sorters' share of
//    the memory budget (store/table_builder.h). It may
//    lag the views and hash tables of the newest texts by under 64 KiB
//    (16 shards, charged in 4 KiB steps).
#ifndef TRACETABLE_STORE_SHARED_STRINGS_H_
#define TRACETABLE_STORE_SHARED_STRINGS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "format/absl_compat.h"

namespace tracetable {

class SharedStrings {
 public:
  SharedStrings();
  SharedStrings(const SharedStrings&) = delete;
  SharedStrings& operator=(const SharedStrings&) = delete;

  uint32_t Intern(std::string_view s);
  // Intern, also giving the stored text (valid for the table's lifetime).
  uint32_t Intern(std::string_view s, std::string_view* stored);
  std::string_view Text(uint32_t id);

  int64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }
  void Charge(int64_t delta) { bytes_.fetch_add(delta, std::memory_order_relaxed); }

 private:
  // Shards cut contention: two threads meet only on one shard's lock.
  static constexpr uint32_t kShards = 16;  // the hash's top 4 bits pick one
  struct Shard;
  // The set holds a shard's indexes (4 bytes a slot, not a 24-byte view and
  // id); hashing and comparing an index reads its text. Transparent, so a
  // lookup by text makes no index.
  struct IndexHash {
    using is_transparent = void;
    const Shard* shard;
    size_t operator()(std::string_view s) const { return TextHash{}(s); }
    size_t operator()(uint32_t i) const { return TextHash{}(shard->texts[i]); }
  };
  struct IndexEq {
    using is_transparent = void;
    const Shard* shard;
    std::string_view T(std::string_view s) const { return s; }
    std::string_view T(uint32_t i) const { return shard->texts[i]; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const { return T(a) == T(b); }
  };
  struct Shard {
    Shard();
    std::mutex mu;
    std::deque<std::string_view> texts;  // texts[i] has id i * kShards + shard
    absl::flat_hash_set<uint32_t, IndexHash, IndexEq> ids;
    // Decimal texts by value: index. Never also in `ids`.
    absl::flat_hash_map<uint64_t, uint32_t> numbers;
    // Text bytes: blocks filled front to back, never moved.
    std::vector<std::unique_ptr<char[]>> blocks;
    size_t block_left = 0;
    char* block_next = nullptr;
    size_t set_bytes = 0;  // last counted size of `ids` and `numbers`
    size_t uncharged = 0;  // counted, not yet added to bytes_
  };
  std::string_view Store(Shard& s, std::string_view text);
  uint32_t InternNumber(uint64_t value, std::string_view text, std::string_view* stored);
  // Counts a new text's view and its shard's hash tables' growth.
  void ChargeNewText(Shard& s);

  std::array<Shard, kShards> shards_;
  std::atomic<int64_t> bytes_{0};
};

}  // namespace tracetable

#endif  // TRACETABLE_STORE_SHARED_STRINGS_H_
