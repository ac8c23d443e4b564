#include "query/memory.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "format/absl_compat.h"
#include "format/keys.h"
#include "format/memory_segment_codec.h"
#include "leveldb/db.h"
#include "query/window.h"

namespace tracetable {

namespace {

constexpr int64_t kNoStep = INT64_MIN;

absl::Status Damaged(const Table& table, uint32_t id, uint32_t segment, std::string_view what) {
  return absl::DataLossError(absl::StrCat(table.path(), ": memory segment ", segment, " of memory ID ",
                                          id, ": ", Av(what)));
}

absl::Status Validate(const Table& table, uint32_t id, uint32_t segment,
                      const proto::MemorySegment& s) {
  const proto::MemoryId& m = table.meta().memory().ids(static_cast<int>(id));
  const uint64_t first = m.segment_seq(static_cast<int>(segment));
  const uint64_t end = segment + 1 < static_cast<uint32_t>(m.segment_seq_size())
                           ? m.segment_seq(static_cast<int>(segment) + 1)
                           : m.events();
  if (s.first_seq() != first || end < first || static_cast<uint64_t>(s.ts_delta_size()) != end - first ||
      s.in_use_size() != s.ts_delta_size()) {
    return Damaged(table, id, segment, "its events disagree with the metadata");
  }
  const int n = s.alloc_seq_size();
  if (s.alloc_ts_size() != n || s.free_seq_size() != n || s.free_ts_size() != n || s.bytes_size() != n ||
      s.requested_size() != n || s.addr_size() != n || s.op_size() != n || s.shape_size() != n ||
      s.data_type_size() != n || s.region_size() != n || s.event_id_size() != n ||
      (s.step_size() != 0 && s.step_size() != n) || s.carried() > static_cast<uint32_t>(n)) {
    return Damaged(table, id, segment, "allocation columns of different lengths");
  }
  for (int i = 0; i < n; ++i) {
    const bool carried = static_cast<uint32_t>(i) < s.carried();
    if (carried ? s.alloc_seq(i) >= first : (s.alloc_seq(i) < first || s.alloc_seq(i) >= end)) {
      return Damaged(table, id, segment, "an allocation outside its place");
    }
    if (s.free_seq(i) != 0 && s.free_seq(i) <= s.alloc_seq(i)) {
      return Damaged(table, id, segment, "an allocation freed before it was made");
    }
    const size_t strings = table.num_strings();
    if (s.op(i) >= strings || s.shape(i) >= strings || s.data_type(i) >= strings || s.region(i) >= strings) {
      return Damaged(table, id, segment, "string id out of range");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<proto::MemorySegment> ReadSegment(const Table& table, uint32_t id, uint32_t segment) {
  std::string value;
  if (absl::Status st = table.Get(MemorySegmentKey(id, segment), &value); !st.ok()) {
    return Damaged(table, id, segment, absl::IsNotFound(st) ? std::string_view("missing") : Sv(st.message()));
  }
  proto::MemorySegment s;
  if (!s.ParseFromString(value)) return Damaged(table, id, segment, "does not parse");
  if (absl::Status d = DecodeSegmentColumns(&s); !d.ok()) return Damaged(table, id, segment, Sv(d.message()));
  if (absl::Status v = Validate(table, id, segment, s); !v.ok()) return v;
  return s;
}

absl::Status CheckId(const Table& table, uint32_t id) {
  if (id >= static_cast<uint32_t>(table.meta().memory().ids_size())) {
    return absl::NotFoundError(absl::StrCat("no memory ID ", id));
  }
  const proto::MemoryId& m = table.meta().memory().ids(static_cast<int>(id));
  if (m.segment_seq_size() != m.segment_ts_size() || (m.events() > 0 && m.segment_seq_size() == 0)) {
    return absl::DataLossError(absl::StrCat(table.path(), ": memory ID ", id, " has a bad segment directory"));
  }
  return absl::OkStatus();
}

// The live set just after event `seq`, which is in `segment`.
absl::StatusOr<MemoryBreakdown> BreakdownAtSeq(const Table& table, uint32_t id, uint32_t segment,
                                               uint64_t seq) {
  absl::StatusOr<proto::MemorySegment> s = ReadSegment(table, id, segment);
  if (!s.ok()) return s.status();
  MemoryBreakdown b;
  b.id = id;
  b.seq = seq;
  const uint64_t k = seq - s->first_seq();
  int64_t ts = 0;
  for (uint64_t i = 0; i <= k; ++i) ts += s->ts_delta(static_cast<int>(i));
  b.ts = ts;
  b.in_use = s->in_use(static_cast<int>(k));
  for (int i = 0; i < s->alloc_seq_size(); ++i) {
    if (s->alloc_seq(i) > seq) continue;
    if (s->free_seq(i) != 0 && s->free_seq(i) - 1 <= seq) continue;
    LiveAllocation a;
    a.bytes = s->bytes(i);
    a.requested = s->requested(i);
    a.addr = s->addr(i);
    a.alloc_ts = s->alloc_ts(i);
    a.alloc_seq = s->alloc_seq(i);
    a.event_id = s->event_id(i);
    if (s->step_size() > 0 && s->step(i) != kNoStep) {
      a.has_step = true;
      a.step = s->step(i);
    }
    a.op = table.String(s->op(i));
    a.shape = table.String(s->shape(i));
    a.data_type = table.String(s->data_type(i));
    a.region = table.String(s->region(i));
    b.live_bytes += a.bytes;
    b.live.push_back(a);
  }
  std::sort(b.live.begin(), b.live.end(), [](const LiveAllocation& x, const LiveAllocation& y) {
    if (x.bytes != y.bytes) return x.bytes > y.bytes;
    return x.alloc_seq < y.alloc_seq;
  });
  b.unattributed = b.in_use - b.live_bytes;
  return b;
}

}  // namespace

absl::StatusOr<std::vector<uint32_t>> SelectMemoryIds(const Table& table, std::string_view id,
                                                      std::string_view host) {
  std::vector<uint32_t> out;
  const proto::MemoryProfile& p = table.meta().memory();
  for (int i = 0; i < p.ids_size(); ++i) {
    if (!id.empty() && p.ids(i).name() != id) continue;
    if (!host.empty() && p.ids(i).host() != host) continue;
    out.push_back(static_cast<uint32_t>(i));
  }
  if (out.empty() && (!id.empty() || !host.empty())) {
    std::string known;
    for (const proto::MemoryId& m : p.ids()) {
      absl::StrAppend(&known, known.empty() ? "" : ", ", m.host().empty() ? "" : absl::StrCat(m.host(), "/"),
                      m.name());
    }
    return absl::NotFoundError(absl::StrCat("no memory ID matches", id.empty() ? "" : absl::StrCat(" id '", Av(id), "'"),
                                            host.empty() ? "" : absl::StrCat(" host '", Av(host), "'"), " (the table has: ",
                                            known.empty() ? "none" : known, ")"));
  }
  return out;
}

absl::StatusOr<MemoryBreakdown> MemoryBreakdownAtPeak(const Table& table, uint32_t id) {
  if (absl::Status s = CheckId(table, id); !s.ok()) return s;
  const proto::MemoryId& m = table.meta().memory().ids(static_cast<int>(id));
  if (m.events() == 0) return absl::NotFoundError(absl::StrCat("memory ID ", m.name(), " has no events"));
  if (m.peak_seq() >= m.events()) return absl::DataLossError(absl::StrCat(table.path(), ": memory peak out of range"));
  auto it = std::upper_bound(m.segment_seq().begin(), m.segment_seq().end(), m.peak_seq());
  const uint32_t segment = static_cast<uint32_t>(it - m.segment_seq().begin()) - 1;
  absl::StatusOr<MemoryBreakdown> b = BreakdownAtSeq(table, id, segment, m.peak_seq());
  if (!b.ok()) return b;
  if (b->in_use != m.peak_in_use() || b->ts != m.peak_ts()) {
    return absl::DataLossError(absl::StrCat(table.path(), ": memory segment disagrees with the recorded peak"));
  }
  b->at_peak = true;
  return b;
}

absl::StatusOr<MemoryBreakdown> MemoryBreakdownAt(const Table& table, uint32_t id, int64_t ts) {
  if (absl::Status s = CheckId(table, id); !s.ok()) return s;
  const proto::MemoryId& m = table.meta().memory().ids(static_cast<int>(id));
  auto it = std::upper_bound(m.segment_ts().begin(), m.segment_ts().end(), ts);
  if (it == m.segment_ts().begin()) {
    MemoryBreakdown b;
    b.id = id;
    b.before_first_event = true;
    b.ts = ts;
    return b;
  }
  const uint32_t segment = static_cast<uint32_t>(it - m.segment_ts().begin()) - 1;
  absl::StatusOr<proto::MemorySegment> s = ReadSegment(table, id, segment);
  if (!s.ok()) return s.status();
  // The last event at or before ts: events are in time order.
  int64_t t = 0;
  uint64_t last = 0;
  for (int i = 0; i < s->ts_delta_size(); ++i) {
    t += s->ts_delta(i);
    if (t > ts) break;
    last = static_cast<uint64_t>(i);
  }
  return BreakdownAtSeq(table, id, segment, s->first_seq() + last);
}

absl::Status CheckMemorySegment(const Table& table, uint32_t id, uint32_t segment, std::string_view value) {
  if (absl::Status s = CheckId(table, id); !s.ok()) return Damaged(table, id, segment, Sv(s.message()));
  if (segment >= static_cast<uint32_t>(table.meta().memory().ids(static_cast<int>(id)).segment_seq_size())) {
    return Damaged(table, id, segment, "not in the segment directory");
  }
  proto::MemorySegment s;
  if (!s.ParseFromArray(value.data(), static_cast<int>(value.size()))) {
    return Damaged(table, id, segment, "does not parse");
  }
  if (absl::Status d = DecodeSegmentColumns(&s); !d.ok()) return Damaged(table, id, segment, Sv(d.message()));
  return Validate(table, id, segment, s);
}

absl::StatusOr<std::vector<MemorySeries>> MemoryTimeline(const Table& table, uint32_t id, int64_t start,
                                                         int64_t end, int64_t resolution) {
  if (absl::Status s = CheckId(table, id); !s.ok()) return s;
  const proto::MemoryId& m = table.meta().memory().ids(static_cast<int>(id));
  std::vector<MemorySeries> out;
  WindowRequest req;
  req.start = start;
  req.end = end;
  req.resolution = resolution;
  for (uint32_t t : {m.in_use_track(), m.reserved_track(), m.available_track(), m.fragmentation_track()}) {
    if (t == 0) continue;
    if (t - 1 >= static_cast<uint32_t>(table.resources().tracks_size())) {
      return absl::DataLossError(absl::StrCat(table.path(), ": memory counter track out of range"));
    }
    req.tracks.push_back(t - 1);
    out.push_back(MemorySeries{table.resources().tracks(static_cast<int>(t - 1)).series(), {}});
  }
  if (req.tracks.empty()) return out;
  absl::StatusOr<WindowResult> w = QueryWindow(table, req);
  if (!w.ok()) return w.status();
  for (const WindowItem& item : w->items) {
    for (size_t k = 0; k < req.tracks.size(); ++k) {
      if (req.tracks[k] == item.track) out[k].samples.emplace_back(item.row.ts, item.row.value);
    }
  }
  return out;
}

}  // namespace tracetable
