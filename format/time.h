// Exact conversion between decimal microsecond text (the Trace Event Format's
// unit) and integer time. Doubles cannot hold epoch-scale microseconds with
// nanosecond digits (1.7e15 us needs 61 bits), so numbers are parsed from
// their text.
#ifndef TRACETABLE_FORMAT_TIME_H_
#define TRACETABLE_FORMAT_TIME_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tracetable {

// An absolute time: ns + ps / 1000 nanoseconds, 0 <= ps < 1000 (floored, so
// negative times have ns rounded down).
struct NsPs {
  int64_t ns = 0;
  int32_t ps = 0;
  friend bool operator==(const NsPs&, const NsPs&) = default;
};

// Parses a JSON number (e.g. "12", "-3.25", "1.5e3", "1680000000000.123456")
// in microseconds. Digits below a picosecond are truncated toward -infinity.
// Fails on text that is not a number or out of int64 nanosecond range.
absl::StatusOr<NsPs> ParseMicros(std::string_view text);

// Same, with a multiplier for inputs whose unit is not the microsecond:
// unit_ps_per_unit = 1'000'000 for microseconds, 1000 for nanoseconds.
absl::StatusOr<NsPs> ParseTimeText(std::string_view text, int64_t ps_per_unit);

// Picoseconds from `origin_ns` to abs_ns + sub_ns_ps / 1000. A table holds
// relative times within about +-25 days (a quarter of int64 picoseconds, so
// sums of times and durations cannot overflow); farther is an error.
absl::StatusOr<int64_t> RelativePs(int64_t abs_ns, int32_t sub_ns_ps, int64_t origin_ns);

// Formats picoseconds as decimal microseconds with no trailing zeros
// ("1.5", "-0.000001", "1680000000000.123"). Exact for any int64 input;
// `ps_hi` lets callers pass origin_ns * 1000 + rel_ps without overflow.
std::string FormatMicros(__int128 ps);
// The same, appended to `out` (no temporary string: answers format millions).
void AppendMicros(std::string* out, __int128 ps);

}  // namespace tracetable

#endif  // TRACETABLE_FORMAT_TIME_H_
