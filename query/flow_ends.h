// Flow ends: every binding of one flow id, read through the flow index
// (keys "F", store/flow_index_writer.h) — one block read and the few event
// tiles holding the id — so a lookup costs the same on a 1M and a 100M table.
//
// Contract (checked against a brute-force scan in tests/query):
//  - a flow event (s/t/f) with the id is one end, bound to the deepest slice
//    of its track enclosing its time (as the viewer anchors it), or to the
//    flow event itself when no slice encloses it; s is "out", f "in", t both;
//  - a slice whose bind id (flow v2 flow_out / flow_in) is the id is one end:
//    "out" at its end, "in" at its start (a slice in the middle of a chain
//    bound by one id is two ends);
//  - ends come in (at, track, id) order; flow events and bind ids are told
//    apart (`via_event`), since they are separate namespaces in a trace.
#ifndef TRACETABLE_QUERY_FLOW_ENDS_H_
#define TRACETABLE_QUERY_FLOW_ENDS_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "format/tile_codec.h"
#include "format/tracetable.pb.h"
#include "store/table.h"

namespace tracetable {

struct FlowEnd {
  uint32_t track = 0;
  TileRow slice;          // the bound slice (or the flow event when none encloses it)
  bool via_event = false; // a flow event (s/t/f); else a slice's bind id
  EventKind phase = EventKind::kSlice;  // the flow event's kind when via_event
  uint64_t flow_event_id = 0;           // when via_event
  int64_t at = 0;         // where the arrow attaches (relative ps)
  bool out = false, in = false;
};

// Every end of flow id `flow` (format/flow_id.h). FailedPrecondition when the
// table has no flow index (written before it existed).
absl::StatusOr<std::vector<FlowEnd>> FindFlowEnds(const Table& table, uint32_t flow, ReadStats* stats);

// The flow id of `text` (format/flow_id.h): a number's at once (in tables
// that have numeric flow ids); else the string id, if the table has that
// string, found by scanning the string table (already in memory): callers
// that know the id pass it instead.
std::optional<uint32_t> FindFlowId(const Table& table, std::string_view text);

// Decodes and checks an "F" record: column lengths agree, every tile key names
// an existing track and level.
absl::Status CheckFlowTiles(const Table& table, std::string_view value, proto::FlowTiles* out);

}  // namespace tracetable

#endif  // TRACETABLE_QUERY_FLOW_ENDS_H_
