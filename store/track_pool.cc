#include "store/track_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "format/keys.h"
#include "format/levels.h"
#include "format/tile_codec.h"
#include "store/external_sorter.h"
#include "store/level_tiles.h"
#include "store/placed_levels.h"
#include "store/sorted_runs.h"
#include "store/thread_name.h"
#include "store/track_writer.h"

namespace tracetable {
namespace {

// Tracks with fewer events go to SortedRuns::AddSmall (~16 B/event on
// disk: up to ~2 MB a track). At 16,384, gen 1M's 16 mid-sized tracks
// (~60k events) made ~600 KB files of their own, which cut the small
// tracks' stretch into as many files, all under the seal's 1 MiB and so
// merged again at the end (12.5 MiB, 0.04 s on one core); held instead,
// they are written in one file while the search index is built.
constexpr uint64_t kSmallTrackRecords = 1 << 17;

// Records a track's writers emit out of key order (summaries as their bins
// close, level after level; statistics buckets), held until the track's
// event tiles are written, then put in key order after them: each worker's
// files then hold whole tracks in key order (store/sorted_runs.h). A track
// whose held records outgrow the limit sends them to a writer of their own
// instead: its files overlap each other (sealing merges those) but not the
// track's event tiles, which stay in order.
class HeldRecords {
 public:
  HeldRecords(RunWriter* out, RunWriter* overflow, size_t limit)
      : out_(out), overflow_(overflow), limit_(limit) {}

  absl::Status Hold(std::string key, std::string value) {
    bytes_ += key.size() + value.size();
    held_.emplace_back(std::move(key), std::move(value));
    if (bytes_ < limit_) return absl::OkStatus();
    overflowed_ = true;
    return PutAll(overflow_);
  }

  bool overflowed() const { return overflowed_; }

  // Hands the held records over (a small track's, for SortedRuns::AddSmall).
  void Take(std::vector<std::pair<std::string, std::string>>* to) {
    for (auto& r : held_) to->push_back(std::move(r));
    held_.clear();
    bytes_ = 0;
  }

  // At the end of the track.
  absl::Status Flush() {
    if (!overflowed_) return PutAll(out_);
    overflowed_ = false;
    if (absl::Status s = PutAll(overflow_); !s.ok()) return s;
    // The next track's records must not share a file with these.
    return overflow_->Cut();
  }

 private:
  absl::Status PutAll(RunWriter* to) {
    std::sort(held_.begin(), held_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [key, value] : held_) {
      if (absl::Status s = to->Put(key, value); !s.ok()) return s;
    }
    held_.clear();
    bytes_ = 0;
    return absl::OkStatus();
  }

  RunWriter* out_;
  RunWriter* overflow_;
  size_t limit_;
  size_t bytes_ = 0;
  bool overflowed_ = false;
  std::vector<std::pair<std::string, std::string>> held_;
};

}  // namespace

struct TrackPool::Shared {
  std::mutex mu;
  std::condition_variable finished;  // a worker has stopped
  int running = 0;                   // workers not yet stopped
  absl::Status error;
  std::atomic<bool> failed{false};
  std::vector<size_t> order;         // indexes of the tracks, biggest first
  std::atomic<size_t> next{0};       // the next place in `order` to take
  std::atomic<uint64_t> done{0};     // records built

  void Fail(absl::Status s) {
    std::lock_guard<std::mutex> lock(mu);
    if (error.ok()) error = std::move(s);
    failed.store(true);
  }
};

class TrackPool::Worker {
 public:
  Worker(const TrackPoolOptions& options, Shared* shared, int index)
      : options_(options),
        shared_(shared),
        levels_(options.placed_records),
        tiles_(absl::StrCat(options.spill_prefix, index, "-tiles"), options.placed_records * sizeof(PlacedRecord)),
        placed_(absl::StrCat(options.spill_prefix, index), LessFn<PlacedLess>{}, options.placed_records),
        out_(options.runs->NewWriter()),
        stats_out_(options.runs->NewWriter()),
        overflow_out_(options.runs->NewWriter()),
        held_summaries_(out_.get(), overflow_out_.get(), options.held_bytes),
        held_stats_(stats_out_.get(), overflow_out_.get(), options.held_bytes) {}

  // Builds the tracks it takes until none is left or the pool fails, then
  // closes its files.
  void Run(const std::vector<Track>& tracks, const ReadFn& read) {
    NameThisThread("tt-tile");
    while (!shared_->failed.load()) {
      const size_t i = shared_->next.fetch_add(1);
      if (i >= shared_->order.size()) break;
      const size_t index = shared_->order[i];
      if (absl::Status s = Build(tracks[index], index, read); !s.ok()) {
        shared_->Fail(std::move(s));
        break;
      }
    }
    if (!shared_->failed.load()) {
      absl::Status s = out_->Close();
      if (s.ok()) s = stats_out_->Close();
      if (s.ok()) s = overflow_out_->Close();
      if (!s.ok()) shared_->Fail(std::move(s));
    }
    std::lock_guard<std::mutex> lock(shared_->mu);
    --shared_->running;
    shared_->finished.notify_all();
  }

  const TrackPoolStats& stats() const { return stats_; }

 private:
  // `ordinal`: the track's place in key order.
  absl::Status Build(const Track& track, size_t ordinal, const ReadFn& read) {
    // Tracks next to each other in key order join in this worker's file;
    // another worker's track between them starts a new one.
    if (ordinal != last_ordinal_ + 1) {
      if (absl::Status s = out_->Cut(); !s.ok()) return s;
      if (absl::Status s = stats_out_->Cut(); !s.ok()) return s;
    }
    last_ordinal_ = ordinal;
    track_ = track.id;
    const bool counter = options_.resources->tracks(track.id).kind() == proto::Track::COUNTER;
    writer_ = std::make_unique<TrackWriter>(
        track.id, counter, options_.num_levels, options_.min_ts,
        [this](std::string key, std::string value) {
          CountTile(value);
          return held_summaries_.Hold(std::move(key), std::move(value));
        },
        [this](const TileRow& row, int level) { return Place(row, level); });
    if (options_.stats_grid) {
      stats_index_ = std::make_unique<StatsIndexWriter>(
          track.id, counter, *options_.stats_grid,
          [this](std::string key, std::string value) { return held_stats_.Hold(std::move(key), std::move(value)); });
      writer_->set_observer([this](const TileRow& row) { return stats_index_->Add(row); });
    }
    uint64_t records = 0;
    since_release_ = 0;
    absl::Status s = read(ordinal, [&](absl::Span<const SortRecord> span) -> absl::Status {
      // Another worker's error is the one Run() returns.
      if (shared_->failed.load(std::memory_order_relaxed)) return absl::CancelledError("stopped");
      for (const SortRecord& r : span) {
        if (absl::Status st = writer_->Add(r); !st.ok()) return st;
        if (++since_release_ == kReleaseEvery) {
          since_release_ = 0;
          if (absl::Status st = ReleaseFinal(r.ts); !st.ok()) return st;
        }
      }
      records += span.size();
      shared_->done.fetch_add(span.size(), std::memory_order_relaxed);
      return absl::OkStatus();
    });
    if (s.ok()) s = writer_->Finish(options_.resources->mutable_tracks(static_cast<int>(track_)));
    writer_.reset();
    if (!s.ok()) return s;
    stats_.events += records;
    // A short track's records join other short tracks' in memory: a file
    // of their own would cost more than their bytes (5,000 threads of 3
    // events: 2.6 s of file creation).
    const bool small = records < kSmallTrackRecords && !held_summaries_.overflowed() &&
                       !held_stats_.overflowed();
    if (stats_index_) {
      s = stats_index_->Finish();
      stats_.stats_buckets += stats_index_->buckets();
      stats_.stats_bytes += stats_index_->bytes();
      stats_index_.reset();
      if (!s.ok()) return s;
      if (!small) {
        if (s = held_stats_.Flush(); !s.ok()) return s;
      }
    }
    if (!small) {
      if (s = WriteEventTiles(nullptr); !s.ok()) return s;
      return held_summaries_.Flush();
    }
    std::vector<std::pair<std::string, std::string>> small_records;
    if (s = WriteEventTiles(&small_records); !s.ok()) return s;
    held_summaries_.Take(&small_records);
    held_stats_.Take(&small_records);
    // Its keys lie between this worker's tracks before and after it.
    last_ordinal_ = kNoOrdinal;
    return options_.runs->AddSmall(std::move(small_records));
  }

  absl::Status Place(const TileRow& row, int level) {
    auto fill = [&](PlacedRecord* p) {
      FillRecordFromRow(&p->event, row, track_);
      p->lane = row.lane;
      p->level = static_cast<uint32_t>(level);
    };
    if (levels_.AddInPlace(static_cast<uint32_t>(level), fill)) return absl::OkStatus();
    PlacedRecord p;
    fill(&p);
    // Past the track's share of memory: the levels go to the external
    // sorter in order (it spills when full, its buffer as large as their
    // share) and fill again. Records handed over in no order had to be
    // sorted from scratch (Kineto 10M's biggest track: 5.5M records in
    // 600k-record runs, 0.6 CPU-s); in order, its sort is one pass.
    placed_spilled_ = true;
    if (absl::Status s = MovePlacedToSorter(); !s.ok()) return s;
    if (levels_.Add(p)) return absl::OkStatus();
    return placed_.Add(p);  // a share of no records at all
  }

  absl::Status MovePlacedToSorter() {
    return levels_.Drain([this](const PlacedRecord& q) { return placed_.Add(q); });
  }

  // A level's events that start before the start of the bin one level up
  // holding `ts` (the last event read) are final: every event placed there
  // later is alone in a bin inside that one or later (store/track_writer.h;
  // the top level's own bin for the top level). They are cut into tiles
  // now, so a track's events need not wait for its end (Kineto 10M's
  // biggest track spilled 302 MB of them). Once events of the track have
  // gone to the sorter, the rest wait for the end: some of what is still
  // to come may start before the sorted ones.
  absl::Status ReleaseFinal(int64_t ts) {
    if (placed_spilled_) return absl::OkStatus();
    const int top = options_.num_levels - 1;
    return levels_.ReleaseBefore(
        [&](uint32_t level) {
          const int64_t res = Resolution(std::min(static_cast<int>(level) + 1, top));
          if (res == 0) return ts;  // one level: events are placed as they are read
          return options_.min_ts + (ts - options_.min_ts) / res * res;
        },
        [this](const PlacedRecord& p) { return AddRow(p); });
  }

  // The next event of its level: the level's open tile is cut first when
  // full (never between rows of one start: tile keys must be unique).
  absl::Status AddRow(const PlacedRecord& p) {
    if (p.level >= rows_.size()) rows_.resize(p.level + 1);
    std::vector<TileRow>& rows = rows_[p.level];
    if (rows.size() >= kMaxRowsPerTile && p.event.ts != rows.back().ts) {
      if (absl::Status s = CutTile(p.level); !s.ok()) return s;
    }
    rows.push_back(RowFromRecord(p.event, p.lane));
    return absl::OkStatus();
  }

  absl::Status CutTile(uint32_t level) {
    std::vector<TileRow>& rows = rows_[level];
    if (rows.empty()) return absl::OkStatus();
    TileKey key{track_, TileSection::kEvents, static_cast<uint8_t>(level),
                static_cast<uint64_t>(rows.front().ts - options_.min_ts)};
    std::string value = EncodeTile(rows, rows.front().ts, /*summary=*/false);
    if (options_.search_index) {
      if (absl::Status s = options_.search_index->AddTile(key, rows.front().ts, rows, &search_scratch_); !s.ok()) return s;
    }
    if (options_.flow_index) {
      if (absl::Status s = options_.flow_index->AddTile(key, rows); !s.ok()) return s;
    }
    rows.clear();
    CountTile(value);
    return tiles_.Add(level, EncodeTileKey(key), std::move(value));
  }

  // The track's remaining events, then all its event tiles in key order
  // (level, start): into `small` if given, else this worker's file.
  absl::Status WriteEventTiles(std::vector<std::pair<std::string, std::string>>* small) {
    auto add = [this](const PlacedRecord& p) { return AddRow(p); };
    absl::Status st;
    if (placed_spilled_) {
      placed_spilled_ = false;
      st = MovePlacedToSorter();
      if (st.ok()) st = placed_.Merge(options_.placed_records * sizeof(PlacedRecord) / 4, add);
    } else {
      st = levels_.Drain(add);
    }
    for (uint32_t level = 0; st.ok() && level < rows_.size(); ++level) st = CutTile(level);
    if (!st.ok()) return st;
    return tiles_.Drain([&](std::string key, std::string value) -> absl::Status {
      if (small) {
        small->emplace_back(std::move(key), std::move(value));
        return absl::OkStatus();
      }
      return out_->Put(key, value);
    });
  }

  void CountTile(const std::string& value) {
    ++stats_.tiles;
    stats_.tile_bytes += value.size();
  }

  const TrackPoolOptions& options_;
  Shared* shared_;
  std::unique_ptr<TrackWriter> writer_;
  std::unique_ptr<StatsIndexWriter> stats_index_;
  uint32_t track_ = 0;
  // A track's placed events: in memory, per level (store/placed_levels.h),
  // and past its share, also in the external sorter (each fill in order).
  PlacedLevels levels_;
  bool placed_spilled_ = false;
  static constexpr uint32_t kReleaseEvery = 4096;  // records read between releases
  uint32_t since_release_ = 0;
  std::vector<std::vector<TileRow>> rows_;  // per level: its open tile's rows
  LevelTiles tiles_;                        // the track's tiles, per level
  SearchIndexWriter::Scratch search_scratch_;  // for this worker's calls to AddTile
  ExternalSorter<PlacedRecord, LessFn<PlacedLess>> placed_;
  std::unique_ptr<RunWriter> out_, stats_out_, overflow_out_;
  HeldRecords held_summaries_, held_stats_;
  static constexpr uint64_t kNoOrdinal = UINT64_MAX - 1;  // +1 is no track's
  uint64_t last_ordinal_ = UINT64_MAX;  // none yet (+1 wraps to the first, 0)
  TrackPoolStats stats_;
};

TrackPool::TrackPool(TrackPoolOptions options)
    : options_(std::move(options)), shared_(std::make_unique<Shared>()) {
  options_.threads = std::max(options_.threads, 1);
}

TrackPool::~TrackPool() = default;

absl::Status TrackPool::Run(const std::vector<Track>& tracks, const ReadFn& read, const TickFn& tick) {
  Shared& shared = *shared_;
  shared.order.resize(tracks.size());
  for (size_t i = 0; i < tracks.size(); ++i) shared.order[i] = i;
  std::stable_sort(shared.order.begin(), shared.order.end(),
                   [&](size_t a, size_t b) { return tracks[a].records > tracks[b].records; });
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::thread> threads;
  shared.running = options_.threads;
  for (int w = 0; w < options_.threads; ++w) {
    Worker* worker = workers.emplace_back(std::make_unique<Worker>(options_, &shared, w)).get();
    threads.emplace_back([worker, &tracks, &read] { worker->Run(tracks, read); });
  }
  {
    std::unique_lock<std::mutex> lock(shared.mu);
    while (!shared.finished.wait_for(lock, std::chrono::milliseconds(100),
                                     [&] { return shared.running == 0; })) {
      lock.unlock();
      absl::Status s = tick(shared.done.load(std::memory_order_relaxed));
      lock.lock();
      if (!s.ok() && shared.error.ok()) {
        shared.error = std::move(s);
        shared.failed.store(true);
      }
    }
  }
  for (std::thread& t : threads) t.join();
  for (auto& w : workers) {
    stats_.events += w->stats().events;
    stats_.tiles += w->stats().tiles;
    stats_.tile_bytes += w->stats().tile_bytes;
    stats_.stats_buckets += w->stats().stats_buckets;
    stats_.stats_bytes += w->stats().stats_bytes;
  }
  std::lock_guard<std::mutex> lock(shared.mu);
  return shared.error;
}

}  // namespace tracetable
