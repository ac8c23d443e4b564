// FirstTimestampNs: the absolute time (ns) an ingest of `input` would take as
// its origin — the first timestamp its reader converts — found by reading
// only as far as the first event (a JSON trace: its first events; an XSpace:
// the file is parsed, its first plane's first event converted). A run made
// from a folder takes its first input's (docs/format.md, "Runs"), as a
// single-table ingest of the same inputs would.
#ifndef TRACETABLE_INGEST_ORIGIN_PROBE_H_
#define TRACETABLE_INGEST_ORIGIN_PROBE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "ingest/input.h"

namespace tracetable {

// NotFound when the input holds no timed event; the reader's error when it
// fails before the first one.
absl::StatusOr<int64_t> FirstTimestampNs(const InputFile& input);

}  // namespace tracetable

#endif  // TRACETABLE_INGEST_ORIGIN_PROBE_H_
