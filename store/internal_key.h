// LevelDB's internal key layout, as its sorted files (.ldb) store it:
// user key, then 8 bytes little-endian (sequence << 8 | type), type 1 for a
// value and 0 for a deletion. Files are ordered by user key ascending, then
// sequence descending. The public leveldb headers read files (leveldb::Table)
// but do not export this order, so the table reader brings its own.
#ifndef TRACETABLE_STORE_INTERNAL_KEY_H_
#define TRACETABLE_STORE_INTERNAL_KEY_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "leveldb/comparator.h"

namespace tracetable {

struct ParsedInternalKey {
  std::string_view user_key;
  uint64_t sequence = 0;
  bool is_value = false;  // false: a deletion
};

// False if `key` is too short or has an unknown type.
bool ParseInternalKey(std::string_view key, ParsedInternalKey* out);

// `user_key` as a value written at `sequence`.
std::string MakeInternalKey(std::string_view user_key, uint64_t sequence);

// The key that seeks to the newest entry of `user_key`.
std::string SeekKey(std::string_view user_key);

// The order of internal keys (process-wide, never destroyed).
const leveldb::Comparator* InternalKeyOrder();

}  // namespace tracetable

#endif  // TRACETABLE_STORE_INTERNAL_KEY_H_
