#include "query/window.h"

#include <algorithm>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "format/levels.h"
#include "query/parallel_for.h"

namespace tracetable {
namespace {

// Below this many tracks per thread, a second thread costs more than it saves.
constexpr size_t kTracksPerThread = 4;

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

bool Overlaps(const TileRow& r, int64_t start, int64_t end) {
  return r.ts <= end && r.ts + r.dur >= start;
}

// Short events are grouped per (bin, kind group, lane).
struct GroupKey {
  int64_t bin;
  uint32_t kind;
  uint32_t lane;
  bool operator==(const GroupKey&) const = default;
  template <typename H>
  friend H AbslHashValue(H h, const GroupKey& k) {
    return H::combine(std::move(h), k.bin, k.kind, k.lane);
  }
};

class TrackQuery {
 public:
  TrackQuery(const Table& t, const WindowRequest& req, int level, int64_t q, WindowResult* out)
      : t_(t), req_(req), level_(level), q_(q), out_(out) {}

  absl::Status Run(uint32_t track) {
    const proto::Track& info = t_.resources().tracks(track);
    if (info.kind() == proto::Track::COUNTER) return Counter(track);
    return Slices(track, info);
  }

 private:
  void Emit(uint32_t track, const TileRow& row) {
    WindowItem item{track, row.count > 1, row};
    if (item.summary) {
      ++out_->summaries;
    } else {
      ++out_->events;
    }
    out_->items.push_back(item);
  }

  absl::Status Slices(uint32_t track, const proto::Track& info) {
    const int64_t base = t_.meta().min_ts();
    // Short events are grouped by Q bins; a group spans at most Q + R past its
    // bin start, so groups that can reach the window start at qfirst.
    // Short events are grouped by Q bins; a group spans at most Q + R past its
    // bin start, so the groups that can reach the window are the bins from
    // qfirst to the one holding `end`, and each is read whole.
    const int64_t qfirst_ts =
        level_ == 0 ? req_.start
                    : base + FloorDiv(req_.start - q_ - req_.resolution - base, q_) * q_;
    const int64_t qlast_ts =
        level_ == 0 ? req_.end : base + (FloorDiv(req_.end - base, q_) + 1) * q_ - 1;
    std::vector<TileRow> rows;
    absl::flat_hash_map<GroupKey, TileRow> short_groups;
    auto add_short = [&](const TileRow& r) {
      GroupKey k{FloorDiv(r.ts - base, q_), KindGroup(r.kind), r.lane};
      auto [it, inserted] = short_groups.try_emplace(k, r);
      if (!inserted) FoldSummary(&it->second, r);
    };

    // Events stored at levels >= src: long ones, and short ones alone in
    // their group at src (store/track_writer.h). Short ones are read over
    // the whole bins they group into. src's bins nest in Q's, so its
    // summaries fold into Q groups exactly.
    const int src = SummarySource(level_);
    for (int c = src; c < info.classes_size(); ++c) {
      const proto::ClassExtent& ext = info.classes(c);
      if (ext.count() == 0 || ext.max_end() < qfirst_ts || ext.min_ts() > qlast_ts) continue;
      const int64_t from = std::min(req_.start - ext.max_dur(), qfirst_ts);
      const int64_t to = qlast_ts;
      rows.clear();
      if (absl::Status s = t_.ReadTiles(track, TileSection::kEvents, c, from, to, &rows,
                                        &out_->stats);
          !s.ok()) {
        return s;
      }
      for (const TileRow& r : rows) {
        if (level_ > 0 && r.dur < req_.resolution) {
          if (r.ts >= qfirst_ts && r.ts <= qlast_ts) add_short(r);
        } else if (Overlaps(r, req_.start, req_.end)) {
          Emit(track, r);
        }
      }
    }
    if (level_ == 0) return absl::OkStatus();

    rows.clear();
    if (absl::Status s = t_.ReadTiles(track, TileSection::kSummaries, src, qfirst_ts, qlast_ts,
                                      &rows, &out_->stats);
        !s.ok()) {
      return s;
    }
    for (const TileRow& r : rows) {
      if (r.ts >= qfirst_ts && r.ts <= qlast_ts) add_short(r);
    }
    for (const auto& [key, group] : short_groups) {
      if (Overlaps(group, req_.start, req_.end)) Emit(track, group);
    }
    return absl::OkStatus();
  }

  absl::Status Counter(uint32_t track) {
    std::vector<TileRow> rows;
    // Above level 0, whole bins: a bin's first/min/max/last are only right
    // for the whole bin. Samples alone in their level bin are stored at a
    // level >= level_; bins of several keep their picks in the summaries.
    // Picks of src's bins hold the picks of the Q bins they nest in.
    const int64_t base = t_.meta().min_ts();
    const int64_t from = level_ == 0 ? req_.start : base + FloorDiv(req_.start - base, q_) * q_;
    const int64_t to = level_ == 0 ? req_.end : base + (FloorDiv(req_.end - base, q_) + 1) * q_ - 1;
    const proto::Track& info = t_.resources().tracks(track);
    const int src = SummarySource(level_);
    for (int c = src; c < info.classes_size(); ++c) {
      const proto::ClassExtent& ext = info.classes(c);
      // Sections ending before `from` may hold the sample in effect at it.
      if (ext.count() == 0 || ext.min_ts() > to) continue;
      if (absl::Status s = t_.ReadTiles(track, TileSection::kEvents, c, from, to, &rows, &out_->stats);
          !s.ok()) {
        return s;
      }
    }
    if (level_ > 0) {
      if (absl::Status s = t_.ReadTiles(track, TileSection::kSummaries, src, from, to, &rows,
                                        &out_->stats);
          !s.ok()) {
        return s;
      }
    }
    // The sample in effect at `from`: the last one before it. ReadTiles
    // includes the tile before `from` of every section, which holds it.
    const TileRow* carry = nullptr;
    for (const TileRow& r : rows) {
      if (r.ts < from && (!carry || std::tie(r.ts, r.id) > std::tie(carry->ts, carry->id))) carry = &r;
    }
    if (carry) {
      TileRow r = *carry;
      r.count = 1;
      Emit(track, r);
    }
    rows.erase(std::remove_if(rows.begin(), rows.end(),
                              [&](const TileRow& r) { return r.ts < from || r.ts > to; }),
               rows.end());
    if (level_ == 0) {
      for (const TileRow& r : rows) Emit(track, r);
      return absl::OkStatus();
    }
    // Re-pick first/min/max/last per Q bin from the level's picks.
    std::sort(rows.begin(), rows.end(), [](const TileRow& a, const TileRow& b) {
      return a.ts != b.ts ? a.ts < b.ts : a.id < b.id;
    });
    size_t i = 0;
    while (i < rows.size()) {
      const int64_t bin = FloorDiv(rows[i].ts - base, q_);
      size_t j = i, lo = i, hi = i;
      while (j < rows.size() && FloorDiv(rows[j].ts - base, q_) == bin) {
        if (rows[j].value < rows[lo].value) lo = j;
        if (rows[j].value > rows[hi].value) hi = j;
        ++j;
      }
      std::vector<size_t> picks = {i, lo, hi, j - 1};
      std::sort(picks.begin(), picks.end());
      picks.erase(std::unique(picks.begin(), picks.end()), picks.end());
      for (size_t p : picks) {
        TileRow r = rows[p];
        r.count = 1;
        Emit(track, r);
      }
      i = j;
    }
    return absl::OkStatus();
  }

  const Table& t_;
  const WindowRequest& req_;
  int level_;
  int64_t q_;
  WindowResult* out_;
};

}  // namespace

int64_t SummaryBinWidth(int64_t resolution, int level) {
  if (level <= 0) return 1;
  // The smallest multiple of the level's resolution that is >= the request:
  // summaries are never finer than asked for.
  const int64_t r = Resolution(level);
  return std::max<int64_t>(1, (resolution + r - 1) / r) * r;
}

absl::StatusOr<WindowResult> QueryWindow(const Table& table, const WindowRequest& req) {
  if (req.end < req.start) return absl::InvalidArgumentError("window end is before its start");
  if (req.resolution < 0) return absl::InvalidArgumentError("resolution must not be negative");
  WindowResult out;
  const int num_levels = static_cast<int>(table.meta().num_levels());
  out.level = LevelForResolution(req.resolution, num_levels);
  out.bin = SummaryBinWidth(req.resolution, out.level);
  std::vector<uint32_t> tracks = req.tracks;
  if (tracks.empty()) {
    for (int i = 0; i < table.resources().tracks_size(); ++i) tracks.push_back(i);
  }
  for (uint32_t track : tracks) {
    if (track >= static_cast<uint32_t>(table.resources().tracks_size())) {
      return absl::InvalidArgumentError(absl::StrCat("no track ", track));
    }
  }
  // Items are in a total order, so answers are byte-identical from run to run
  // (summary groups come out of a hash map whose order is not). The track
  // comes first in it: tracks are queried and sorted independently, on
  // several threads when there are enough of them, and concatenated.
  std::sort(tracks.begin(), tracks.end());
  std::vector<WindowResult> parts(tracks.size());
  std::vector<absl::Status> errors(tracks.size());
  const int threads = tracks.size() >= kTracksPerThread * 2 ? QueryThreads() : 1;
  ParallelFor(tracks.size(), threads, [&](size_t i) {
    WindowResult& part = parts[i];
    TrackQuery q(table, req, out.level, out.bin, &part);
    errors[i] = q.Run(tracks[i]);
    std::sort(part.items.begin(), part.items.end(), [](const WindowItem& a, const WindowItem& b) {
      return std::tie(a.row.ts, a.row.lane, a.row.kind, a.row.count, a.row.dur, a.row.id) <
             std::tie(b.row.ts, b.row.lane, b.row.kind, b.row.count, b.row.dur, b.row.id);
    });
  });
  size_t total = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!errors[i].ok()) return errors[i];
    total += parts[i].items.size();
  }
  if (parts.size() == 1) {
    out.items = std::move(parts[0].items);
  } else {
    out.items.reserve(total);
  }
  for (WindowResult& part : parts) {
    if (parts.size() > 1) out.items.insert(out.items.end(), part.items.begin(), part.items.end());
    out.events += part.events;
    out.summaries += part.summaries;
    out.stats.tiles += part.stats.tiles;
    out.stats.bytes += part.stats.bytes;
  }
  out.total_items = out.items.size();
  if (req.limit > 0 && out.items.size() > req.limit) {
    // Keep the earliest items across all tracks.
    std::vector<WindowItem> by_time = out.items;
    std::stable_sort(by_time.begin(), by_time.end(), [](const WindowItem& a, const WindowItem& b) {
      return a.row.ts < b.row.ts;
    });
    by_time.resize(req.limit);
    std::stable_sort(by_time.begin(), by_time.end(), [](const WindowItem& a, const WindowItem& b) {
      return a.track != b.track ? a.track < b.track : a.row.ts < b.row.ts;
    });
    out.items = std::move(by_time);
    out.truncated = true;
    out.events = out.summaries = 0;
    for (const WindowItem& i : out.items) (i.summary ? out.summaries : out.events)++;
  }
  return out;
}

}  // namespace tracetable
