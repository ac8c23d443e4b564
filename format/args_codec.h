// Encoding of one ArgsBlock (format/tracetable.proto): the JSON argument
// objects of up to 256 consecutive event ids, and back.
//
// Contract: DecodeArgsBlock(EncodeArgsBlock(e)) == e byte for byte, whatever
// the texts hold. An object {"k":v,...} is stored as columns: keys interned
// per block, integers as zigzag varints, strings and other values (numbers
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

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tracetable {

// One event's arguments: slot = event id & 255, json = the object text.
struct ArgsEntry {
  uint32_t slot = 0;
  std::string json;
  bool operator==(const ArgsEntry&) const = default;
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
