// Encoding of one ThreadTimeBlock (format/tracetable.proto): the thread times
// (Chrome JSON "tts"/"tdur", ps) of up to 256 consecutive event ids, and back.
//
// Contract: DecodeThreadTimeBlock(EncodeThreadTimeBlock(e)) == e for any
// entries with distinct ascending slots < 256, each with a tts or a tdur or
// both. Decoding checks every count and that every value times the unit fits
// in int64 ps; anything else is an error (a damaged table), never a guess.
#ifndef TRACETABLE_FORMAT_THREAD_TIME_CODEC_H_
#define TRACETABLE_FORMAT_THREAD_TIME_CODEC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tracetable {

// One event's thread time: slot = event id & 255.
struct ThreadTimeEntry {
  uint32_t slot = 0;
  std::optional<int64_t> tts;   // ps, the thread clock as the input gave it
  std::optional<int64_t> tdur;  // ps
  bool operator==(const ThreadTimeEntry&) const = default;
};

std::string EncodeThreadTimeBlock(const std::vector<ThreadTimeEntry>& entries);

// Replaces `out` with the entries of an encoded block, in slot order.
absl::Status DecodeThreadTimeBlock(std::string_view bytes, std::vector<ThreadTimeEntry>* out);

// The entry of one slot; NotFound if the block has none for it.
absl::StatusOr<ThreadTimeEntry> FindThreadTime(std::string_view bytes, uint32_t slot);

}  // namespace tracetable

#endif  // TRACETABLE_FORMAT_THREAD_TIME_CODEC_H_
