// Decodes one XPlane's bytes with a hand-written protobuf wire reader: no
// generated message and no allocation per event, stat or string (protobuf
// 3.21 heap-allocates every decoded string over 15 bytes and every map
// node, which was a fifth of the reader's time).
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
//    Map entries follow protobuf's map rules: a missing key is 0, a value
//    given twice in one entry is merged, a later entry with the same key
//    replaces the earlier one.
//  - Everything is a view: strings point into `bytes`, which must outlive
//    the PlaneView's use. The flat vectors are reused from plane to plane,
//    so once their capacity is reached little is allocated. Fields the
//    emitter does not use (XEventMetadata.metadata and child_id) are
//    checked, not kept.
//  - On false nothing in `out` is meaningful; callers locate the fault with
//    wire_check.h.
#ifndef TRACETABLE_INGEST_XSPACE_WIRE_READER_H_
#define TRACETABLE_INGEST_XSPACE_WIRE_READER_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"

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

struct EventMetadataView {
  int64_t id = 0;
  std::string_view name;
  std::string_view display_name;
  uint32_t stats_begin = 0;  // [begin, end) in PlaneView::stats
  uint32_t stats_end = 0;
};

struct StatMetadataView {
  int64_t id = 0;
  std::string_view name;
  std::string_view description;
};

using StatMetadataMap = absl::flat_hash_map<int64_t, StatMetadataView>;

struct PlaneView {
  int64_t id = 0;
  std::string_view name;
  std::vector<LineView> lines;
  std::vector<EventView> events;
  // Stats of events and of event metadata, each owner's in one run.
  std::vector<StatView> stats;
  std::vector<StatView> plane_stats;
  absl::flat_hash_map<int64_t, EventMetadataView> event_metadata;
  StatMetadataMap stat_metadata;

  std::span<const EventView> EventsOf(const LineView& line) const {
    return {events.data() + line.events_begin, line.events_size()};
  }
  // `owner`: an EventView or EventMetadataView of this plane.
  template <typename Owner>
  std::span<const StatView> StatsOf(const Owner& owner) const {
    return {stats.data() + owner.stats_begin,
            size_t{owner.stats_end - owner.stats_begin}};
  }
};

// Decodes `bytes` (one XPlane message) into `out`.
bool DecodePlane(std::string_view bytes, PlaneView* out);

}  // namespace tracetable::xspace_wire

#endif  // TRACETABLE_INGEST_XSPACE_WIRE_READER_H_
