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
//  - Intern and Text may be called from any thread at once.
//  - Intern of equal texts gives one id; id 0 is "".
//  - Text(id) is valid, and the same, for the table's lifetime.
#ifndef TRACETABLE_STORE_SHARED_STRINGS_H_
#define TRACETABLE_STORE_SHARED_STRINGS_H_

#include <array>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"

namespace tracetable {

class SharedStrings {
 public:
  SharedStrings();

  uint32_t Intern(std::string_view s);
  std::string_view Text(uint32_t id);

 private:
  // Shards cut contention: two threads meet only on one shard's lock.
  static constexpr uint32_t kShards = 16;  // the hash's top 4 bits pick one
  struct Shard {
    std::mutex mu;
    // Keys view `texts`, whose elements never move.
    absl::flat_hash_map<std::string_view, uint32_t> ids;
    std::deque<std::string> texts;  // texts[i] has id i * kShards + shard
  };
  std::array<Shard, kShards> shards_;
};

}  // namespace tracetable

#endif  // TRACETABLE_STORE_SHARED_STRINGS_H_
