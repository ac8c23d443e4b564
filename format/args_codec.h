// Encoding of one ArgsBlock (format/tracetable.proto): the JSON argument
// objects of up to 256 consecutive event ids, and back.
//
// Contract: DecodeArgsBlock(EncodeArgsBlock(e)) == e byte for byte, whatever
// the texts hold. An object {"k":v,...} is stored as columns: keys interned
// per block, integers as zigzag varints of their difference from the key's
// integer before in the block (format version 6; version 5's plain `ints`
// column decodes too), strings and other values (numbers
// like 1.50, nested objects) as their verbatim text, and its whitespace, if
// any, as an interned layout. Anything whose rendering from the columns would
// differ from the input is stored as its whole text instead, so nothing is
// ever normalized.
#ifndef TRACETABLE_FORMAT_ARGS_CODEC_H_
#define TRACETABLE_FORMAT_ARGS_CODEC_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "format/absl_compat.h"
#include "format/tracetable.pb.h"

namespace tracetable {

// One event's arguments: slot = event id & 255, json = the object text.
struct ArgsEntry {
  uint32_t slot = 0;
  std::string json;
  bool operator==(const ArgsEntry&) const = default;
};

namespace args_internal {

// Value types in the low 3 bits of a field's shape varint.
enum ValueType : uint32_t {
  kInt = 0,     // ints column
  kString = 1,  // texts column: the characters between the quotes, verbatim
  kRaw = 2,     // texts column: the value's text verbatim (1.5, [..], {..})
  kTrue = 3,
  kFalse = 4,
  kNull = 5,
};

// One field of an object, as views of its text.
struct Field {
  std::string_view key;  // between the quotes, escapes verbatim
  ValueType type;
  std::string_view text;  // kString: between the quotes; kInt, kRaw: the value
  int64_t value = 0;
  // Whitespace before the key, before ':', after ':' and after the value.
  std::string_view gaps[4];
};

}  // namespace args_internal

// Encodes a block entry by entry: each text is taken apart as it is added
// (so it need not outlive Add), and the columns' memory is reused from
// block to block.
class ArgsBlockEncoder {
 public:
  // `slot` < 256 and above the slot of the entry added before.
  void Add(uint32_t slot, std::string_view json);
  bool empty() const { return empty_; }
  // The block's bytes; the encoder is empty again.
  std::string Finish();

 private:
  void PutInts();

  proto::ArgsBlock block_;
  // Views of block_'s keys and layouts (their strings stay put until Finish).
  absl::flat_hash_map<std::string_view, uint32_t, TextHash> key_ids_, layout_ids_;
  std::vector<args_internal::Field> fields_;
  // The block's integers in order with their key ids: Finish() stores each
  // key's as differences or as they are, whichever is shorter.
  std::vector<std::pair<uint32_t, int64_t>> ints_;
  struct KeyInts {
    uint64_t last = 0;
    int64_t saved_by_values = 0;  // bytes the values take less than differences
  };
  std::vector<KeyInts> key_ints_;  // per key id that has integers
  // Per field position: the key last seen there and its id. Objects of one
  // kind repeat their keys in order, so most fields skip the hash lookup.
  std::vector<std::pair<std::string_view, uint32_t>> key_at_;
  std::string layout_;
  bool empty_ = true;
};

// `entries` must have distinct slots < 256 in ascending order.
std::string EncodeArgsBlock(const std::vector<ArgsEntry>& entries);

// Replaces `out` with the entries of an encoded block, in slot order. Fails
// on bytes that do not parse.
absl::Status DecodeArgsBlock(std::string_view bytes, std::vector<ArgsEntry>* out);

// The text of one slot without rendering the others; NotFound if the block
// has no entry for it.
absl::StatusOr<std::string> FindArgs(std::string_view bytes, uint32_t slot);

}  // namespace tracetable

#endif  // TRACETABLE_FORMAT_ARGS_CODEC_H_
