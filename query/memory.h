// Memory profile queries over what the ingest derived (store/
// memory_profile_builder.h, docs/format.md "Memory profile"): the memory IDs
// and their summaries, the allocations live at the peak or at a time, and the
// in-use / reserved / available / fragmentation timeline at a resolution.
//
// Contract:
//  - "At time T" means after every memory event of that ID with ts <= T (ties
//    in read order); "at the peak" means just after the first event that
//    reached the peak in use, even if a later event at the same ts lowers it.
//  - A breakdown's live allocations are exactly those allocated at or before
//    that event and freed after it (or never); its `unattributed` is in_use
//    minus their sum (memory allocated before the trace began, frees of
//    allocations the trace never showed), so rows + unattributed = in_use.
//  - Reads one segment record (O(live + 4096) rows) per breakdown, and the
//    counter tracks' tiles for a timeline (QueryWindow's counter contract:
//    per bin the first, min, max and last samples).
//  - A segment that does not decode or disagrees with the metadata is a
//    DataLoss error, never an answer.
#ifndef TRACETABLE_QUERY_MEMORY_H_
#define TRACETABLE_QUERY_MEMORY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "format/tracetable.pb.h"
#include "store/table.h"

namespace tracetable {

// Indices into table.meta().memory().ids() whose name equals `id` and host
// equals `host` (an empty filter accepts all). NotFound when nothing matches
// a non-empty filter.
absl::StatusOr<std::vector<uint32_t>> SelectMemoryIds(const Table& table, std::string_view id,
                                                      std::string_view host);

struct LiveAllocation {
  int64_t bytes = 0;
  int64_t requested = 0;
  uint64_t addr = 0;
  int64_t alloc_ts = 0;  // relative ps
  uint64_t alloc_seq = 0;
  uint64_t event_id = 0;
  bool has_step = false;
  int64_t step = 0;
  std::string_view op, shape, data_type, region;  // into the table's strings
};

struct MemoryBreakdown {
  uint32_t id = 0;
  bool at_peak = false;
  bool before_first_event = false;  // T precedes every event: nothing in use
  int64_t ts = 0;    // the event's time (relative ps), or T when before_first_event
  uint64_t seq = 0;  // the event's index among the ID's events
  int64_t in_use = 0;
  std::vector<LiveAllocation> live;  // largest first (ties: allocation order)
  int64_t live_bytes = 0;
  int64_t unattributed = 0;  // in_use - live_bytes
};

absl::StatusOr<MemoryBreakdown> MemoryBreakdownAtPeak(const Table& table, uint32_t id);
absl::StatusOr<MemoryBreakdown> MemoryBreakdownAt(const Table& table, uint32_t id, int64_t ts);

// Checks one segment record against the table's metadata (used by verify).
absl::Status CheckMemorySegment(const Table& table, uint32_t id, uint32_t segment,
                                std::string_view value);

struct MemorySeries {
  std::string name;  // "in use bytes", "reserved bytes", "available bytes", "fragmentation"
  std::vector<std::pair<int64_t, double>> samples;  // (relative ps, value), in time order
};

// The ID's counter series over [start, end] at `resolution` ps.
absl::StatusOr<std::vector<MemorySeries>> MemoryTimeline(const Table& table, uint32_t id,
                                                         int64_t start, int64_t end,
                                                         int64_t resolution);

}  // namespace tracetable

#endif  // TRACETABLE_QUERY_MEMORY_H_
