#include "store/track_writer.h"

#include <algorithm>
#include <array>

#include "format/keys.h"
#include "format/levels.h"

namespace tracetable {
namespace {

// std::sort is not stable: the order must be total (one row per kind group
// and lane) so the tiles are the same bytes whatever order a bin's groups
// opened in.
bool TsLess(const TileRow& a, const TileRow& b) {
  if (a.ts != b.ts) return a.ts < b.ts;
  if (a.lane != b.lane) return a.lane < b.lane;
  return KindGroup(a.kind) < KindGroup(b.kind);
}

// Counters: sorts `candidates` by time and gives the indexes of the first,
// min, max and last, each once, in order; returns how many. A bin closes
// about once per sample at the finest levels: vectors made and freed per
// bin (here and for the candidates) cost Kineto 10M's two 1.25M-sample
// counter tracks 0.34 s each where they now take 0.21.
size_t PickCounterSamples(std::vector<TileRow>& candidates, std::array<size_t, 4>* picks) {
  std::sort(candidates.begin(), candidates.end(),
            [](const TileRow& a, const TileRow& b) {
              return a.ts != b.ts ? a.ts < b.ts : a.id < b.id;
            });
  size_t lo = 0, hi = 0;
  for (size_t i = 1; i < candidates.size(); ++i) {
    if (candidates[i].value < candidates[lo].value) lo = i;
    if (candidates[i].value > candidates[hi].value) hi = i;
  }
  *picks = {0, lo, hi, candidates.size() - 1};
  std::sort(picks->begin(), picks->end());
  return static_cast<size_t>(std::unique(picks->begin(), picks->end()) - picks->begin());
}

}  // namespace

TrackWriter::TrackWriter(uint32_t track, bool counter, int num_levels,
                         int64_t min_ts, PutFn put, PlaceFn place)
    : track_(track),
      counter_(counter),
      num_levels_(num_levels),
      min_ts_(min_ts),
      put_(std::move(put)),
      place_(std::move(place)),
      event_tiles_(num_levels),
      levels_(num_levels),
      extents_(num_levels) {}

absl::Status TrackWriter::Add(const SortRecord& r) {
  if (absl::Status s = CloseBinsBefore(r.ts); !s.ok()) return s;
  const bool slice = r.kind == EventKind::kSlice;
  const bool nested = slice && (r.flags & kFlagAsync);
  const uint32_t lane = nested  ? nests_.Place(r.ts, r.dur, r.id, GetAsyncNest(r))
                        : slice ? layout_.Place(r.ts, r.dur)
                                : 0;
  const int cls = slice ? DurationClass(r.dur, num_levels_) : 0;
  TileRow row = RowFromRecord(r, lane);
  if (nested) {
    row.value = 0;
    row.flow_out = row.flow_in = 0;
  }
  ++num_events_;
  if (observe_) {
    if (absl::Status s = observe_(row); !s.ok()) return s;
  }
  if (cls + 1 == num_levels_) return Place(row, cls);
  return Insert(cls + 1, row);
}

absl::Status TrackWriter::Place(const TileRow& row, int level) {
  proto::ClassExtent& ext = extents_[level];
  if (ext.count() == 0) {
    ext.set_min_ts(row.ts);
    ext.set_max_end(row.ts + row.dur);
  }
  ext.set_count(ext.count() + 1);
  ext.set_min_ts(std::min(ext.min_ts(), row.ts));
  ext.set_max_end(std::max(ext.max_end(), row.ts + row.dur));
  ext.set_max_dur(std::max(ext.max_dur(), row.dur));
  return place_(row, level);
}

uint32_t* TrackWriter::OpenSlot(Level& level, uint32_t group, uint32_t lane) {
  if (lane < kNearLanes) {
    const size_t i = size_t{lane} * kKindGroups + group;
    if (i >= level.open_near.size()) level.open_near.resize((size_t{lane} + 1) * kKindGroups, kNoRow);
    return &level.open_near[i];
  }
  return &level.open_far.try_emplace((uint64_t{group} << 32) | lane, kNoRow).first->second;
}

// Every open bin holds the last event's start (rows move up only from bins
// that held it), and each level's bins lie inside the next one's: the open
// bins above the first that ends after `ts` contain it, so they end after
// `ts` too and the walk up stops there (walking all 15 levels for every
// event was 40% of Add).
absl::Status TrackWriter::CloseBinsBefore(int64_t ts) {
  for (int k = 1; k < num_levels_; ++k) {
    const Level& level = levels_[k];
    if (level.bin < 0) continue;
    if (ts < level.bin_end) break;
    if (absl::Status s = CloseBin(k); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status TrackWriter::Insert(int k, const TileRow& item) {
  Level& level = levels_[k];
  // Most rows fall in the open bin: no division for them (an `idiv` was a
  // quarter of this function's samples, gen 10M).
  if (level.bin < 0 || item.ts >= level.bin_end || item.ts < level.bin_end - Resolution(k)) {
    const int64_t bin = (item.ts - min_ts_) / Resolution(k);
    if (level.bin >= 0 && bin != level.bin) {
      if (absl::Status s = CloseBin(k); !s.ok()) return s;
    }
    level.bin = bin;
    level.bin_end = min_ts_ + (bin + 1) * Resolution(k);
  }
  if (counter_) {
    level.counter_open.push_back(item);
  } else {
    uint32_t* slot = OpenSlot(level, KindGroup(item.kind), item.lane);
    if (*slot == kNoRow) {
      *slot = static_cast<uint32_t>(level.open.size());
      level.open.push_back(item);
    } else {
      // The group gains a member: lone events in it were last alone one
      // level down, which is where they are stored.
      TileRow& agg = level.open[*slot];
      if (agg.count == 1) {
        if (absl::Status s = Place(agg, k - 1); !s.ok()) return s;
      }
      if (item.count == 1) {
        if (absl::Status s = Place(item, k - 1); !s.ok()) return s;
      }
      FoldSummary(&agg, item);
    }
  }
  return absl::OkStatus();
}

absl::Status TrackWriter::CloseBin(int k) {
  Level& level = levels_[k];
  if (counter_) {
    // Read in place, as below: closing touches only the levels above k.
    level.bin = -1;
    absl::Status s = CloseCounterBin(k, level.counter_open);
    level.counter_open.clear();
    return s;
  }
  // What follows touches only the levels above k and this level's tile, so
  // the rows are read in place and cleared (keeping their capacity) after.
  std::vector<TileRow>& rows = level.open;
  for (const TileRow& row : rows) {
    if (row.lane < kNearLanes) level.open_near[row.lane * kKindGroups + KindGroup(row.kind)] = kNoRow;
  }
  if (!level.open_far.empty()) level.open_far.clear();
  std::sort(rows.begin(), rows.end(), TsLess);
  level.bin = -1;
  for (const TileRow& row : rows) {
    const bool lone_event = row.count == 1;
    if (!lone_event) {
      if (absl::Status s = AppendRow(k, /*summary=*/true, row); !s.ok()) return s;
    }
    if (k + 1 < num_levels_) {
      if (absl::Status s = Insert(k + 1, row); !s.ok()) return s;
    } else if (lone_event) {
      if (absl::Status s = Place(row, k); !s.ok()) return s;  // alone at the top
    }
  }
  rows.clear();
  return absl::OkStatus();
}

// Counters: a sample alone in its bin moves up like a lone event; a bin of
// several keeps its first, min, max and last samples, marked as picks (an
// in-memory flag, never stored) so they are not taken for lone samples above.
absl::Status TrackWriter::CloseCounterBin(int k, std::vector<TileRow>& candidates) {
  constexpr uint32_t kPicked = 1u << 31;
  if (candidates.size() == 1 && !(candidates[0].flags & kPicked)) {
    if (k + 1 < num_levels_) return Insert(k + 1, candidates[0]);
    return Place(candidates[0], k);
  }
  for (const TileRow& c : candidates) {
    if (!(c.flags & kPicked)) {
      if (absl::Status s = Place(c, k - 1); !s.ok()) return s;
    }
  }
  std::array<size_t, 4> picks;
  const size_t num_picks = PickCounterSamples(candidates, &picks);
  for (size_t i = 0; i < num_picks; ++i) {
    TileRow pick = candidates[picks[i]];
    pick.flags &= ~kPicked;
    if (absl::Status s = AppendRow(k, /*summary=*/true, pick); !s.ok()) return s;
    pick.flags |= kPicked;
    if (k + 1 < num_levels_) {
      if (absl::Status s = Insert(k + 1, pick); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

absl::Status TrackWriter::AppendRow(int k, bool summary, const TileRow& row) {
  if (summary && !HasSummaryTiles(k)) return absl::OkStatus();
  Level& tile = summary ? levels_[k] : event_tiles_[k];
  // Never cut between rows of one timestamp: tile keys hold the first row's
  // start and must be unique.
  if (tile.rows.size() >= kMaxRowsPerTile && row.ts != tile.rows.back().ts) {
    if (absl::Status s = FlushTile(k, summary); !s.ok()) return s;
  }
  tile.rows.push_back(row);
  return absl::OkStatus();
}

absl::Status TrackWriter::FlushTile(int k, bool summary) {
  Level& tile = summary ? levels_[k] : event_tiles_[k];
  if (tile.rows.empty()) return absl::OkStatus();
  TileKey key;
  key.track = track_;
  key.section = summary ? TileSection::kSummaries : TileSection::kEvents;
  key.level = static_cast<uint8_t>(k);
  const int64_t start = tile.rows.front().ts;
  key.start = static_cast<uint64_t>(start - min_ts_);
  std::string value = EncodeTile(tile.rows, start, summary);
  tile.rows.clear();
  return put_(EncodeTileKey(key), std::move(value));
}

absl::Status TrackWriter::Finish(proto::Track* stats) {
  for (int k = 1; k < num_levels_; ++k) {
    if (levels_[k].bin >= 0) {
      if (absl::Status s = CloseBin(k); !s.ok()) return s;
    }
  }
  for (int k = 0; k < num_levels_; ++k) {
    if (absl::Status s = FlushTile(k, false); !s.ok()) return s;
    if (absl::Status s = FlushTile(k, true); !s.ok()) return s;
  }
  stats->set_max_depth(std::max(layout_.max_lane(), nests_.max_lane()));
  stats->set_num_events(num_events_);
  stats->clear_classes();
  for (const proto::ClassExtent& e : extents_) *stats->add_classes() = e;
  return absl::OkStatus();
}

}  // namespace tracetable
