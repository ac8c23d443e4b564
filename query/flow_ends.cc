#include "query/flow_ends.h"

#include <algorithm>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "format/flow_id.h"
#include "format/keys.h"
#include "query/window.h"
#include "store/table_format.h"

namespace tracetable {
namespace {

bool IsFlowEvent(EventKind k) {
  return k == EventKind::kFlowStart || k == EventKind::kFlowStep || k == EventKind::kFlowEnd;
}

// The deepest slice of `track` enclosing `ts`, from an exact window over that
// instant (a few tile reads).
absl::StatusOr<std::optional<TileRow>> Enclosing(const Table& t, uint32_t track, int64_t ts,
                                                 ReadStats* stats) {
  WindowRequest req;
  req.start = ts;
  req.end = ts;
  req.tracks = {track};
  absl::StatusOr<WindowResult> w = QueryWindow(t, req);
  if (!w.ok()) return w.status();
  stats->tiles += w->stats.tiles;
  stats->bytes += w->stats.bytes;
  std::optional<TileRow> best;
  for (const WindowItem& i : w->items) {
    if (i.summary || i.row.kind != EventKind::kSlice) continue;
    if (i.row.ts > ts || i.row.ts + i.row.dur < ts) continue;
    if (!best || i.row.lane > best->lane) best = i.row;
  }
  return best;
}

}  // namespace

absl::Status CheckFlowTiles(const Table& t, std::string_view value, proto::FlowTiles* out) {
  if (!out->ParseFromArray(value.data(), static_cast<int>(value.size()))) {
    return absl::DataLossError("corrupt table: flow index record does not parse");
  }
  uint64_t tiles = 0;
  uint32_t prev = 0;
  for (int i = 0; i < out->slot_size(); ++i) {
    if (out->slot(i) >= (1u << kFlowBlockShift) || (i && out->slot(i) <= prev)) {
      return absl::DataLossError("corrupt table: flow index slots out of order");
    }
    prev = out->slot(i);
    tiles += out->count(i);
  }
  if (out->count_size() != out->slot_size() || out->track_size() != static_cast<int>(tiles) ||
      out->level_size() != out->track_size() || out->start_size() != out->track_size()) {
    return absl::DataLossError("corrupt table: flow index columns disagree");
  }
  for (int i = 0; i < out->track_size(); ++i) {
    if (out->track(i) >= static_cast<uint32_t>(t.resources().tracks_size()) ||
        out->level(i) >= t.meta().num_levels()) {
      return absl::DataLossError("corrupt table: flow index names a tile that cannot exist");
    }
  }
  return absl::OkStatus();
}

std::optional<uint32_t> FindFlowId(const Table& t, std::string_view text) {
  if (t.meta().format_version() >= kNumericFlowIdsVersion) {
    if (std::optional<uint32_t> n = NumericFlowId(text)) return n;
  }
  for (size_t i = 1; i < t.num_strings(); ++i) {
    if (t.String(static_cast<uint32_t>(i)) == text) return static_cast<uint32_t>(i);
  }
  return std::nullopt;
}

absl::StatusOr<std::vector<FlowEnd>> FindFlowEnds(const Table& t, uint32_t flow, ReadStats* stats) {
  if (!t.meta().has_flow_index()) {
    return absl::FailedPreconditionError("this table has no flow index; ingest it again to follow flows");
  }
  std::vector<FlowEnd> ends;
  if (flow == 0) return ends;
  std::string value;
  absl::Status got = t.Get(FlowBlockKey(flow >> kFlowBlockShift), &value);
  if (absl::IsNotFound(got)) return ends;
  if (!got.ok()) return got;
  proto::FlowTiles block;
  if (absl::Status s = CheckFlowTiles(t, value, &block); !s.ok()) return s;
  const uint32_t slot = flow & ((1u << kFlowBlockShift) - 1);
  int first = 0, i = 0;
  for (; i < block.slot_size() && block.slot(i) != slot; ++i) first += block.count(i);
  if (i == block.slot_size()) return ends;
  absl::flat_hash_set<uint64_t> seen;  // a tile read also brings the one before it
  for (int k = first; k < first + static_cast<int>(block.count(i)); ++k) {
    TileKey key{block.track(k), TileSection::kEvents, static_cast<uint8_t>(block.level(k)), block.start(k)};
    const int64_t start = t.TileStart(key);
    std::vector<TileRow> rows;
    if (absl::Status s = t.ReadTiles(key.track, key.section, key.level, start, start, &rows, stats); !s.ok()) {
      return s;
    }
    for (const TileRow& r : rows) {
      const bool event = IsFlowEvent(r.kind) && r.flow_id == flow;
      if (!event && r.flow_out != flow && r.flow_in != flow) continue;
      if (!seen.insert(r.id).second) continue;
      FlowEnd e;
      e.track = key.track;
      if (event) {
        e.via_event = true;
        e.phase = r.kind;
        e.flow_event_id = r.id;
        e.at = r.ts;
        e.out = r.kind != EventKind::kFlowEnd;
        e.in = r.kind != EventKind::kFlowStart;
        absl::StatusOr<std::optional<TileRow>> sl = Enclosing(t, key.track, r.ts, stats);
        if (!sl.ok()) return sl.status();
        e.slice = sl->value_or(r);
        ends.push_back(e);
        continue;
      }
      e.slice = r;
      // A slice both ending and starting the flow is two ends of the chain.
      if (r.flow_in == flow) {
        e.in = true;
        e.at = r.ts;
        ends.push_back(e);
        e.in = false;
      }
      if (r.flow_out == flow) {
        e.out = true;
        e.at = r.ts + r.dur;
        ends.push_back(e);
      }
    }
  }
  std::sort(ends.begin(), ends.end(), [](const FlowEnd& a, const FlowEnd& b) {
    return std::tie(a.at, a.track, a.slice.id, a.in) < std::tie(b.at, b.track, b.slice.id, b.in);
  });
  return ends;
}

}  // namespace tracetable
