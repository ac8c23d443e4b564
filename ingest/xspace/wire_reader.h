// Decodes one XPlane's bytes with a hand-written protobuf wire reader for its
// lines, events and stats: no generated message and no allocation per event
// or string (protobuf 3.21 heap-allocates every decoded string over 15 bytes,
// which was a fifth of the reader's time).
//
// Contract:
//  - DecodePlane accepts exactly the plane bytes that the generated XPlane
//    parser (protobuf 3.21, reading a length-limited stream as
//    space_file.cc does) accepts, and gives the values it would: the last
//    occurrence of a scalar or string wins, a oneof keeps its last member,
//    unknown fields and known numbers with another wire type are skipped
//    (groups included), proto3 strings must be UTF-8 (protobuf's own check),
//    nesting is bounded by protobuf's default recursion limit (100). A test
//    holds it to the generated parser on random and mutated bytes.
//  - Lines, events and stats are views: strings point into `bytes`, which
//    must outlive the PlaneView's use. The three flat vectors are reused from
//    plane to plane, so once their capacity is reached nothing is allocated.
//  - The plane's other fields (id, name, metadata maps, plane stats) are few
//    and small; they are decoded by the generated parser into `meta`, whose
//    `lines` stay empty.
//  - On false nothing in `out` is meaningful; callers locate the fault with
//    wire_check.h.
#ifndef TRACETABLE_INGEST_XSPACE_WIRE_READER_H_
#define TRACETABLE_INGEST_XSPACE_WIRE_READER_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/xspace/xplane.pb.h"

namespace tracetable::xspace_wire {

// XStat.value's oneof member.
enum class StatKind : uint8_t { kNone, kDouble, kUint64, kInt64, kStr, kBytes, kRef };

struct StatView {
  int64_t metadata_id = 0;
  StatKind kind = StatKind::kNone;
  uint64_t bits = 0;      // the number (a double's bit pattern for kDouble)
  std::string_view text;  // kStr and kBytes

  double double_value() const;
  uint64_t uint64_value() const { return bits; }
  int64_t int64_value() const { return static_cast<int64_t>(bits); }
};

// A generated XStat (metadata and plane stats) as a view; `stat` must
// outlive it.
StatView ViewOf(const tracetable::xspace::XStat& stat);

struct EventView {
  enum class Data : uint8_t { kNone, kOffsetPs, kNumOccurrences };
  int64_t metadata_id = 0;
  Data data = Data::kNone;
  int64_t data_value = 0;  // offset_ps or num_occurrences, as `data` says
  int64_t duration_ps = 0;
  uint32_t stats_begin = 0;  // [begin, end) in PlaneView::stats
  uint32_t stats_end = 0;

  int64_t offset_ps() const { return data == Data::kOffsetPs ? data_value : 0; }
};

struct LineView {
  int64_t id = 0;
  int64_t display_id = 0;
  int64_t timestamp_ns = 0;
  int64_t duration_ps = 0;
  std::string_view name;
  std::string_view display_name;
  uint32_t events_begin = 0;  // [begin, end) in PlaneView::events
  uint32_t events_end = 0;

  uint64_t events_size() const { return events_end - events_begin; }
};

struct PlaneView {
  tracetable::xspace::XPlane meta;  // all but the lines
  std::vector<LineView> lines;
  std::vector<EventView> events;
  std::vector<StatView> stats;
  std::string meta_bytes;  // scratch: the plane's fields other than lines

  std::span<const EventView> EventsOf(const LineView& line) const {
    return {events.data() + line.events_begin, line.events_size()};
  }
  std::span<const StatView> StatsOf(const EventView& event) const {
    return {stats.data() + event.stats_begin,
            size_t{event.stats_end - event.stats_begin}};
  }
};

// Decodes `bytes` (one XPlane message) into `out`.
bool DecodePlane(std::string_view bytes, PlaneView* out);

}  // namespace tracetable::xspace_wire

#endif  // TRACETABLE_INGEST_XSPACE_WIRE_READER_H_
