// Export: writes a table, or the events starting in a window, as a complete
// Chrome trace JSON file (gzip when the name ends in .gz) with every event's
// arguments, so chrome://tracing, Perfetto and tracetable itself read it.
// Memory stays bounded: tracks are written one after another in time chunks.
// The file appears under its name only when complete.
#ifndef TRACETABLE_QUERY_EXPORT_H_
#define TRACETABLE_QUERY_EXPORT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "store/table.h"

namespace tracetable {

// Returns the number of events written.
absl::StatusOr<uint64_t> ExportChromeTrace(const Table& table, int64_t start, int64_t end,
                                           const std::string& path);

}  // namespace tracetable

#endif  // TRACETABLE_QUERY_EXPORT_H_
