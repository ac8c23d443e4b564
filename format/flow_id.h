// Flow ids (format version 7): a flow's id, as the event rows' `flow_id`,
// `flow_out` and `flow_in` columns hold it, is either
//  - a number: an id written as a decimal integer in [0, 2^31) without
//    leading zeros ("0", "73689"; Kineto and XLA number their flows), held as
//    the value with the top bit set, kept in no string table; or
//  - the string id (below 2^31) of any other id text ("0x1f", "007", "-3",
//    "pid 4:12", an async match key).
// Numbers are not interned because a trace has about one distinct flow id per
// five events: as strings they held ~68 bytes each in memory while ingesting
// (137 MB for a 10M-event Kineto trace) and a table kept them all.
//
// Contract: NumericFlowId(text) is set exactly when the text is such a
// decimal, and FlowIdText(NumericFlowId(text)) == text; two ids are the same
// flow exactly when their texts are equal, whichever form each takes.
#ifndef TRACETABLE_FORMAT_FLOW_ID_H_
#define TRACETABLE_FORMAT_FLOW_ID_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tracetable {

inline constexpr uint32_t kNumericFlowIdBit = uint32_t{1} << 31;

// String ids of a table stay below this, so they never look like numbers.
inline constexpr uint32_t kMaxStringIds = kNumericFlowIdBit;

inline bool IsNumericFlowId(uint32_t id) { return (id & kNumericFlowIdBit) != 0; }

inline std::optional<uint32_t> NumericFlowId(std::string_view text) {
  // At most 10 digits: 2^31 - 1 has 10.
  if (text.empty() || text.size() > 10 || (text[0] == '0' && text.size() > 1)) return std::nullopt;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v >= kNumericFlowIdBit) return std::nullopt;
  return static_cast<uint32_t>(v) | kNumericFlowIdBit;
}

// The decimal text of a numeric flow id.
inline std::string NumericFlowIdText(uint32_t id) {
  return std::to_string(id & ~kNumericFlowIdBit);
}

}  // namespace tracetable

#endif  // TRACETABLE_FORMAT_FLOW_ID_H_
