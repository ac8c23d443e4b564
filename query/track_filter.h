// Choosing tracks the way users name them: track ids, "P" or "P:TID" (the
// pid/tid as the input had them or as answers print them) and host names.
// Shared by the CLI and the server so both accept the same filters.
#ifndef TRACETABLE_QUERY_TRACK_FILTER_H_
#define TRACETABLE_QUERY_TRACK_FILTER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "store/table.h"

namespace tracetable {

struct TrackFilter {
  std::vector<std::string> ids;    // track ids, decimal
  std::vector<std::string> pids;   // "P" or "P:TID"
  std::vector<std::string> hosts;  // host names
  bool empty() const { return ids.empty() && pids.empty() && hosts.empty(); }
};

// The tracks every filter kind accepts (kinds intersect; values of one kind
// add up). An empty filter selects every track. A value that matches nothing
// is NotFound, and `bad_parameter` (if given) is set to its kind: "tracks",
// "pid" or "host".
absl::StatusOr<std::vector<uint32_t>> SelectTracks(const Table& table, const TrackFilter& filter,
                                                   std::string* bad_parameter = nullptr);

}  // namespace tracetable

#endif  // TRACETABLE_QUERY_TRACK_FILTER_H_
