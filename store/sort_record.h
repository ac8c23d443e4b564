// The fixed-size record the builder sorts (in memory and in spill files).
#ifndef TRACETABLE_STORE_SORT_RECORD_H_
#define TRACETABLE_STORE_SORT_RECORD_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "format/event.h"
#include "format/nest_layout.h"
#include "format/tile_codec.h"

namespace tracetable {

// 48 bytes: the main sorter holds every event of a table (10M events: 480
// MB), so its size is both the sort's memory traffic and the pages an ingest
// first touches (64 bytes before: 25% more of both, and a Kineto-shaped 10M
// trace spilled at the default budget).
//
// On B/E records waiting to be matched, `dur` holds the event's tts when
// flags has kFlagHasThreadTime (a begin or end has no duration of its own).
//
// `flow_out`/`flow_in` (slices' flow bindings) share their 8 bytes with a
// counter's value (value(), set_value()) and, on async slices between
// matching and lane layout, with their nest (SetAsyncNest): no record needs
// two of them.
struct SortRecord {
  int64_t ts = 0;
  int64_t dur = 0;
  uint32_t track = 0;
  uint32_t name = 0;
  uint32_t cat = 0;
  uint32_t flow_id = 0;
  uint64_t id : 40 = 0;  // read order; the key of the event's args (< kMaxEventIds)
  EventKind kind : 8 = EventKind::kSlice;
  uint64_t flags : 8 = 0;    // EventFlag bits (all below 1 << 8)
  uint64_t id_high : 8 = 0;  // high bits of an async slice's nest root
  uint32_t flow_out = 0;
  uint32_t flow_in = 0;

  double value() const {
    double v;
    std::memcpy(&v, &flow_out, sizeof(v));
    return v;
  }
  void set_value(double v) { std::memcpy(&flow_out, &v, sizeof(v)); }
};
static_assert(std::is_trivially_copyable_v<SortRecord>);
static_assert(sizeof(SortRecord) == 48);
static_assert(offsetof(SortRecord, flow_in) == offsetof(SortRecord, flow_out) + 4);

// Sets id, kind, flags and id_high with one 8-byte store. Set one by one,
// these bit-fields are byte and masked stores into one word, and the next
// copy of the record reads that word whole before the stores can be
// forwarded to it: a stall of ~15 cycles per record (RecordFromRow in the
// tile workers: 63% of its caller's samples on two instructions).
inline void SetIdWord(SortRecord* r, uint64_t id, EventKind kind, uint64_t flags, uint64_t id_high) {
  const uint64_t word = (id & ((uint64_t{1} << 40) - 1)) | uint64_t{static_cast<uint8_t>(kind)} << 40 |
                        (flags & 0xFF) << 48 | (id_high & 0xFF) << 56;
  std::memcpy(reinterpret_cast<char*>(r) + offsetof(SortRecord, flow_id) + sizeof(uint32_t), &word, sizeof(word));
}
// The word lies between flow_id and flow_out, its fields from the low bits
// up in declaration order (GCC and Clang on x86-64; sort_record_test
// checks the layout).
static_assert(offsetof(SortRecord, flow_out) == offsetof(SortRecord, flow_id) + sizeof(uint32_t) + sizeof(uint64_t));

// Event ids (read order) fit SortRecord::id: a table holds fewer events.
inline constexpr uint64_t kMaxEventIds = uint64_t{1} << 40;

// Between matching and lane layout an async slice (kFlagAsync) carries its
// place in the nest of its id (format/nest_layout.h) in its flow fields
// (async slices bind no flows): `flow_out` the depth, then for a root
// (depth 0, its own id the root) `flow_in` its height, else `flow_in` and
// `id_high` the root's id (a child's own height is not needed: its lane is
// its root's block base + depth). The track writer reads them and writes
// the row without them.
inline void SetAsyncNest(SortRecord* r, const AsyncNest& n) {
  r->flow_out = n.depth;
  if (n.depth == 0) {
    r->flow_in = n.height;
    r->id_high = 0;
  } else {
    r->flow_in = static_cast<uint32_t>(n.root);
    r->id_high = n.root >> 32;
  }
}
inline AsyncNest GetAsyncNest(const SortRecord& r) {
  if (r.flow_out == 0) return AsyncNest{r.id, 0, r.flow_in};
  return AsyncNest{uint64_t{r.id_high} << 32 | r.flow_in, r.flow_out, 1};
}

// Order of the main stream: by track, then start, longer first (a parent
// before the children that start with it), then read order.
inline bool TrackTimeLess(const SortRecord& a, const SortRecord& b) {
  if (a.track != b.track) return a.track < b.track;
  if (a.ts != b.ts) return a.ts < b.ts;
  if (a.dur != b.dur) return a.dur > b.dur;
  return a.id < b.id;
}

// TrackTimeLess as a grouped order (store/external_sorter.h): each track's
// records can be read on their own.
struct TrackTimeOrder {
  bool operator()(const SortRecord& a, const SortRecord& b) const { return TrackTimeLess(a, b); }
  static uint64_t Group(const SortRecord& r) { return r.track; }
};

// Order of begin/end records to match: B/E per thread track, b/n/e per async
// key (flow_id), then time and read order (the Trace Event Format matches in
// timestamp order, ties in file order).
inline bool MatchLess(const SortRecord& a, const SortRecord& b) {
  const bool a_async = a.kind >= EventKind::kAsyncBegin;
  const bool b_async = b.kind >= EventKind::kAsyncBegin;
  if (a_async != b_async) return b_async;
  const uint32_t ga = a_async ? a.flow_id : a.track;
  const uint32_t gb = b_async ? b.flow_id : b.track;
  if (ga != gb) return ga < gb;
  if (a.ts != b.ts) return a.ts < b.ts;
  return a.id < b.id;
}

// One event's thread time on its way to its ThreadTimeBlock: X and
// instants add theirs as they come, matched B/E pairs when matched, so they
// are sorted back into id order.
struct ThreadTimeRecord {
  uint64_t id = 0;
  int64_t tts = 0;
  int64_t tdur = 0;
  uint8_t what = 0;  // ThreadTimeBit
  uint8_t pad[7] = {0, 0, 0, 0, 0, 0, 0};
};
static_assert(std::is_trivially_copyable_v<ThreadTimeRecord>);
inline bool IdLess(const ThreadTimeRecord& a, const ThreadTimeRecord& b) { return a.id < b.id; }

// An event on its way to the event tiles of its storage level (see
// store/track_writer.h), with the lane it was given.
struct PlacedRecord {
  SortRecord event;
  uint32_t lane = 0;
  uint32_t level = 0;
};
static_assert(std::is_trivially_copyable_v<PlacedRecord>);
static_assert(sizeof(PlacedRecord) == 56);

// An event as a tile row (one event: count 1) and back.
inline TileRow RowFromRecord(const SortRecord& r, uint32_t lane) {
  // Every field named: a row zeroed first and then filled took a `rep stos`
  // per event (a third of TrackWriter::Add's samples, gen 10M).
  const bool counter = r.kind == EventKind::kCounter;
  return TileRow{.kind = r.kind,
                 .lane = lane,
                 .ts = r.ts,
                 .dur = r.dur,
                 .name = r.name,
                 .cat = r.cat,
                 .flags = static_cast<uint32_t>(r.flags),
                 .flow_id = r.flow_id,
                 .flow_out = counter ? 0 : r.flow_out,
                 .flow_in = counter ? 0 : r.flow_in,
                 .id = r.id,
                 .value = counter ? r.value() : 0,
                 .count = 1,
                 .covered = static_cast<uint64_t>(r.dur),
                 .longest_dur = r.dur};
}

// RecordFromRow written into *r, every field.
inline void FillRecordFromRow(SortRecord* r, const TileRow& row, uint32_t track) {
  r->ts = row.ts;
  r->dur = row.dur;
  r->track = track;
  r->name = row.name;
  r->cat = row.cat;
  r->flow_id = row.flow_id;
  SetIdWord(r, row.id, row.kind, row.flags, 0);
  if (row.kind == EventKind::kCounter) {
    r->set_value(row.value);
  } else {
    r->flow_out = row.flow_out;
    r->flow_in = row.flow_in;
  }
}
inline SortRecord RecordFromRow(const TileRow& row, uint32_t track) {
  SortRecord r;
  FillRecordFromRow(&r, row, track);
  return r;
}

// Order of the event tiles: track, level, start, read order.
inline bool PlacedLess(const PlacedRecord& a, const PlacedRecord& b) {
  if (a.event.track != b.event.track) return a.event.track < b.event.track;
  if (a.level != b.level) return a.level < b.level;
  if (a.event.ts != b.event.ts) return a.event.ts < b.event.ts;
  return a.event.id < b.event.id;
}

}  // namespace tracetable

#endif  // TRACETABLE_STORE_SORT_RECORD_H_
