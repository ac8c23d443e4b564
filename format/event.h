// The in-memory event model shared by readers (ingest/), the table builder
// (store/) and the query engine (query/).
//
// Contract:
//  - Times are signed 64-bit picoseconds relative to the table's origin
//    (TableMeta.origin_ns, an absolute nanosecond value). Readers get relative
//    times from EventSink::ToRelativePs, which fixes the origin on first use.
//    Picoseconds keep XSpace's precision; the relative base keeps epoch-scale
//    timestamps (1.7e18 ns) from overflowing.
//  - Strings (names, categories, flow ids) are interned by the sink and referred
//    to by dense uint32 ids; id 0 is always the empty string.
//  - Tracks are dense uint32 ids handed out by the sink for a thread, a counter
//    series or an async lane.
#ifndef TRACETABLE_FORMAT_EVENT_H_
#define TRACETABLE_FORMAT_EVENT_H_

#include <cstdint>
#include <string_view>

namespace tracetable {

// What a record in the event stream is. The numeric values are stored on
// disk (Tile.kind), so never renumber them.
enum class EventKind : uint8_t {
  kSlice = 0,       // a complete event: X, or a matched B/E or b/e pair
  kInstant = 1,     // i / I / R, and async n
  kCounter = 2,     // one sample of one counter series
  kFlowStart = 3,   // s
  kFlowStep = 4,    // t
  kFlowEnd = 5,     // f
  // Only between a reader and the builder, never stored: they become kSlice
  // once matched (after sorting by time).
  kBegin = 16,       // B, matched per thread track
  kEnd = 17,         // E
  kAsyncBegin = 18,  // b, matched per async key
  kAsyncEnd = 19,    // e
  kAsyncInstant = 20,  // n
};

// Bits of Event::flags.
enum EventFlag : uint32_t {
  kFlagIncomplete = 1u << 0,    // B (or b) with no matching end: ends at trace end
  kFlagScopeGlobal = 1u << 1,   // instant scope "g"
  kFlagScopeProcess = 1u << 2,  // instant scope "p"
  kFlagBindEnclosing = 1u << 3, // flow "bp":"e"
  kFlagFromBeginEnd = 1u << 4,  // the slice came from a B/E pair
  kFlagAsync = 1u << 5,         // the slice came from a b/e pair
  kFlagHasArgs = 1u << 6,       // an args record exists under the event's id
  // A thread time record exists under the event's id. Between a reader and
  // the builder, on B/E records: the event carries a tts (Event::tts).
  kFlagHasThreadTime = 1u << 7,
};

// Bits of Event::thread_time: which of tts / tdur the input gave.
enum ThreadTimeBit : uint8_t { kHasTts = 1, kHasTdur = 2 };

struct Event {
  EventKind kind = EventKind::kSlice;
  uint32_t track = 0;
  int64_t ts = 0;    // ps, relative to the origin
  int64_t dur = 0;   // ps; slices only (0 for points)
  uint32_t name = 0;  // interned; for counters the series name
  uint32_t cat = 0;   // interned
  uint32_t flags = 0;
  // Flow id (interned string) for s/t/f; for kAsync* the interned match key.
  uint32_t flow_id = 0;
  // Flow v2 on X events: interned ids of bind_id for flow_out / flow_in, 0 if
  // none.
  uint32_t flow_out = 0;
  uint32_t flow_in = 0;
  double value = 0;  // counters
  // Thread time (Chrome JSON "tts"/"tdur"), ps, as the input gives it: the
  // thread's own clock, not relative to the origin. Valid per thread_time's
  // bits; X and instants keep both, B/E give tts to the builder, which
  // makes tdur from the pair.
  int64_t tts = 0;
  int64_t tdur = 0;
  uint8_t thread_time = 0;
  // Raw JSON object text of the event's arguments, or empty. The sink copies
  // it; it is stored apart from timing, keyed by the event's id.
  std::string_view args_json;
};

// Summaries group events by kind: slices, instants, and flow points apart.
inline uint32_t KindGroup(EventKind kind) {
  return kind == EventKind::kSlice ? 0 : kind == EventKind::kInstant ? 1 : 2;
}

}  // namespace tracetable

#endif  // TRACETABLE_FORMAT_EVENT_H_
