#include "store/track_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "format/keys.h"
#include "format/levels.h"
#include "format/tile_codec.h"
#include "store/external_sorter.h"
#include "store/placed_levels.h"
#include "store/sorted_runs.h"
#include "store/thread_name.h"
#include "store/track_writer.h"

namespace tracetable {
namespace {

// 64 KiB: small enough for malloc to recycle instead of mapping fresh pages.
constexpr size_t kBatchRecords = 1024;
// Tracks with fewer events go to SortedRuns::AddSmall (~16 B/event on disk).
constexpr uint64_t kSmallTrackRecords = 16384;

struct Batch {
  uint32_t track = 0;
  uint64_t ordinal = 0;  // the track's place in the order tracks were handed out
  bool last = false;     // the track ends with this batch
  std::vector<SortRecord> records;
};

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
  absl::Status error;
  std::atomic<bool> failed{false};
  std::vector<std::vector<SortRecord>> free_buffers;

  void Fail(absl::Status s) {
    std::lock_guard<std::mutex> lock(mu);
    if (error.ok()) error = std::move(s);
    failed.store(true);
  }
  absl::Status Error() {
    std::lock_guard<std::mutex> lock(mu);
    return error;
  }
  std::vector<SortRecord> TakeBuffer() {
    std::lock_guard<std::mutex> lock(mu);
    std::vector<SortRecord> v;
    if (!free_buffers.empty()) {
      v = std::move(free_buffers.back());
      free_buffers.pop_back();
    }
    v.clear();
    v.reserve(kBatchRecords);
    return v;
  }
  void ReturnBuffer(std::vector<SortRecord> v) {
    std::lock_guard<std::mutex> lock(mu);
    free_buffers.push_back(std::move(v));
  }
};

class TrackPool::Worker {
 public:
  Worker(const TrackPoolOptions& options, Shared* shared, int index)
      : options_(options),
        shared_(shared),
        levels_(options.placed_records),
        placed_(absl::StrCat(options.spill_prefix, index), LessFn<PlacedLess>{}, options.placed_records),
        max_queued_(std::max<size_t>(options.queued_bytes / (kBatchRecords * sizeof(SortRecord)), 16)),
        out_(options.runs->NewWriter()),
        stats_out_(options.runs->NewWriter()),
        overflow_out_(options.runs->NewWriter()),
        held_summaries_(out_.get(), overflow_out_.get(), options.held_bytes),
        held_stats_(stats_out_.get(), overflow_out_.get(), options.held_bytes),
        thread_([this] { Run(); }) {}

  ~Worker() {
    Close();
    if (thread_.joinable()) thread_.join();
  }

  // Blocks while the queue is full (unless the pool has failed).
  void Push(Batch b) {
    queued_records_.fetch_add(b.records.size(), std::memory_order_relaxed);
    std::unique_lock<std::mutex> lock(mu_);
    room_.wait(lock, [&] { return queue_.size() < max_queued_ || shared_->failed.load(); });
    queue_.push_back(std::move(b));
    work_.notify_one();
  }

  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    work_.notify_one();
  }

  void Join() {
    Close();
    if (thread_.joinable()) thread_.join();
  }

  uint64_t queued_records() const { return queued_records_.load(std::memory_order_relaxed); }
  const TrackPoolStats& stats() const { return stats_; }

 private:
  void Run() {
    NameThisThread("tt-tile");
    while (true) {
      Batch b;
      {
        std::unique_lock<std::mutex> lock(mu_);
        work_.wait(lock, [&] { return !queue_.empty() || closed_; });
        if (queue_.empty()) break;
        b = std::move(queue_.front());
        queue_.pop_front();
        room_.notify_one();
      }
      if (!shared_->failed.load()) {
        if (absl::Status s = Process(b); !s.ok()) {
          shared_->Fail(std::move(s));
          room_.notify_all();
        }
      }
      queued_records_.fetch_sub(b.records.size(), std::memory_order_relaxed);
      shared_->ReturnBuffer(std::move(b.records));
    }
    if (!shared_->failed.load()) {
      absl::Status s = out_->Close();
      if (s.ok()) s = stats_out_->Close();
      if (s.ok()) s = overflow_out_->Close();
      if (!s.ok()) shared_->Fail(std::move(s));
    }
  }

  absl::Status Process(const Batch& b) {
    if (!writer_) {
      // Tracks handed out one after the other join in this worker's file;
      // another worker's track between them starts a new one.
      if (b.ordinal != last_ordinal_ + 1) {
        if (absl::Status s = out_->Cut(); !s.ok()) return s;
        if (absl::Status s = stats_out_->Cut(); !s.ok()) return s;
      }
      last_ordinal_ = b.ordinal;
      track_ = b.track;
      track_records_ = 0;
      const bool counter = options_.resources->tracks(b.track).kind() == proto::Track::COUNTER;
      writer_ = std::make_unique<TrackWriter>(
          b.track, counter, options_.num_levels, options_.min_ts,
          [this](std::string key, std::string value) {
            CountTile(value);
            return held_summaries_.Hold(std::move(key), std::move(value));
          },
          [this](const TileRow& row, int level) { return Place(row, level); });
      if (options_.stats_grid) {
        stats_index_ = std::make_unique<StatsIndexWriter>(
            b.track, counter, *options_.stats_grid,
            [this](std::string key, std::string value) { return held_stats_.Hold(std::move(key), std::move(value)); });
        writer_->set_observer([this](const TileRow& row) { return stats_index_->Add(row); });
      }
    }
    for (const SortRecord& r : b.records) {
      if (absl::Status s = writer_->Add(r); !s.ok()) return s;
    }
    stats_.events += b.records.size();
    track_records_ += b.records.size();
    if (!b.last) return absl::OkStatus();
    absl::Status s = writer_->Finish(options_.resources->mutable_tracks(static_cast<int>(track_)));
    writer_.reset();
    if (!s.ok()) return s;
    // A short track's records join other short tracks' in memory: a file
    // of their own would cost more than their bytes (5,000 threads of 3
    // events: 2.6 s of file creation).
    const bool small = track_records_ < kSmallTrackRecords && !held_summaries_.overflowed() &&
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
    std::vector<std::pair<std::string, std::string>> records;
    if (s = WriteEventTiles(&records); !s.ok()) return s;
    held_summaries_.Take(&records);
    held_stats_.Take(&records);
    // Its keys lie between this worker's tracks before and after it.
    last_ordinal_ = kNoOrdinal;
    return options_.runs->AddSmall(std::move(records));
  }

  absl::Status Place(const TileRow& row, int level) {
    PlacedRecord p;
    p.event = RecordFromRow(row, track_);
    p.lane = row.lane;
    p.level = static_cast<uint32_t>(level);
    if (!placed_spilled_) {
      if (levels_.Add(p)) return absl::OkStatus();
      // Past the track's share of memory: its records go to the external
      // sorter, which spills.
      placed_spilled_ = true;
      if (absl::Status s = levels_.TakeAll([this](const PlacedRecord& q) { return placed_.Add(q); }); !s.ok()) {
        return s;
      }
    }
    return placed_.Add(p);
  }

  // The track's events by (level, ts): runs of one level cut into tiles,
  // into `small` if given, else this worker's file.
  absl::Status WriteEventTiles(std::vector<std::pair<std::string, std::string>>* small) {
    std::vector<TileRow> rows;
    uint32_t level = 0;
    auto flush = [&]() -> absl::Status {
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
      if (small) {
        small->emplace_back(EncodeTileKey(key), std::move(value));
        return absl::OkStatus();
      }
      return out_->Put(EncodeTileKey(key), value);
    };
    auto add = [&](const PlacedRecord& p) -> absl::Status {
      // Never cut between rows of one start: tile keys must be unique.
      if (!rows.empty() && (p.level != level ||
                            (rows.size() >= kMaxRowsPerTile && p.event.ts != rows.back().ts))) {
        if (absl::Status s = flush(); !s.ok()) return s;
      }
      level = p.level;
      rows.push_back(RowFromRecord(p.event, p.lane));
      return absl::OkStatus();
    };
    absl::Status st;
    if (placed_spilled_) {
      placed_spilled_ = false;
      st = placed_.Merge(options_.placed_records * sizeof(PlacedRecord) / 4, add);
    } else {
      st = levels_.Drain(add);
    }
    if (!st.ok()) return st;
    return flush();
  }

  void CountTile(const std::string& value) {
    ++stats_.tiles;
    stats_.tile_bytes += value.size();
  }

  const TrackPoolOptions& options_;
  Shared* shared_;
  std::mutex mu_;
  std::condition_variable work_, room_;
  std::deque<Batch> queue_;
  bool closed_ = false;
  std::atomic<uint64_t> queued_records_{0};
  std::unique_ptr<TrackWriter> writer_;
  std::unique_ptr<StatsIndexWriter> stats_index_;
  uint32_t track_ = 0;
  // A track's placed events: in memory, per level (store/placed_levels.h),
  // or past its share, in the external sorter.
  PlacedLevels levels_;
  bool placed_spilled_ = false;
  SearchIndexWriter::Scratch search_scratch_;  // for this worker's calls to AddTile
  ExternalSorter<PlacedRecord, LessFn<PlacedLess>> placed_;
  const size_t max_queued_;  // batches
  std::unique_ptr<RunWriter> out_, stats_out_, overflow_out_;
  HeldRecords held_summaries_, held_stats_;
  static constexpr uint64_t kNoOrdinal = UINT64_MAX - 1;  // +1 is no track's
  uint64_t last_ordinal_ = UINT64_MAX;  // none yet (+1 wraps to the first, 0)
  uint64_t track_records_ = 0;
  TrackPoolStats stats_;
  std::thread thread_;  // last: starts once everything above exists
};

TrackPool::TrackPool(TrackPoolOptions options)
    : options_(std::move(options)), shared_(std::make_unique<Shared>()) {
  options_.threads = std::max(options_.threads, 1);
  for (int w = 0; w < options_.threads; ++w) {
    workers_.push_back(std::make_unique<Worker>(options_, shared_.get(), w));
  }
  batch_ = shared_->TakeBuffer();
}

TrackPool::~TrackPool() {
  if (!finished_) Cancel(absl::CancelledError("track pool abandoned"));
  for (auto& w : workers_) w->Join();
}

absl::Status TrackPool::Add(const SortRecord& r) {
  if (shared_->failed.load(std::memory_order_relaxed)) return shared_->Error();
  if (current_ && r.track != track_) Submit(/*last=*/true);
  if (!current_) {
    current_ = workers_.front().get();
    for (auto& w : workers_) {
      if (w->queued_records() < current_->queued_records()) current_ = w.get();
    }
    track_ = r.track;
    ++ordinal_;
  }
  batch_.push_back(r);
  if (batch_.size() == kBatchRecords) Submit(/*last=*/false);
  return absl::OkStatus();
}

void TrackPool::Submit(bool last) {
  current_->Push(Batch{track_, ordinal_ - 1, last, std::move(batch_)});
  batch_ = shared_->TakeBuffer();
  if (last) current_ = nullptr;
}

void TrackPool::Cancel(absl::Status status) { shared_->Fail(std::move(status)); }

absl::Status TrackPool::Finish() {
  finished_ = true;
  if (current_) Submit(/*last=*/true);
  for (auto& w : workers_) w->Join();
  for (auto& w : workers_) {
    stats_.events += w->stats().events;
    stats_.tiles += w->stats().tiles;
    stats_.tile_bytes += w->stats().tile_bytes;
    stats_.stats_buckets += w->stats().stats_buckets;
    stats_.stats_bytes += w->stats().stats_bytes;
  }
  return shared_->Error();
}

}  // namespace tracetable
