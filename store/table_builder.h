// TableBuilder: the EventSink that turns a stream of events from any number of
// inputs into a .tracetable.
//
// Stages: Add() interns, writes arguments (keyed by read order) and buffers
// fixed-size records in two external sorters (begin/end records to match, and
// everything else); Finish() matches B/E and b/e pairs in time order, merges
// all records by (track, ts) and hands each track to a worker thread
// (store/track_pool.h) that lays out lanes, builds the summary tiles, sorts
// the track's events by storage level and writes their tiles (indexing their
// names: store/search_index_writer.h); memory events also feed the memory
// profile stage (store/memory_profile_builder.h), derived on a thread of its
// own while the main records sort; its counter samples, on tracks of their
// own, are sorted apart and read with them; then it writes the search index, the
// string table, resources and metadata, seals the files (store/sorted_runs.h:
// each producer writes its records straight into sorted files, and only
// files that overlap or are small are merged) and renames the directory
// into place.
//
// Atomicity: everything is written under "<output>.tmp-<pid>"; the final name
// appears only after a successful Finish(), atomically (an existing table is
// swapped out in one rename, so OUT is always the old or the new table).
// Destroying an unfinished builder removes the temporary directory. The
// output path is held exclusively for the whole build (store/output_claim.h),
// and `overwrite` replaces only a tracetable (store/replace_check.h).
//
// Memory: buffered records and the string tables together are bounded by
// options.memory_budget: the string tables (which grow with distinct names
// and ids, not with events, but a trace of millions of distinct flow ids has
// millions) are charged to it as they grow, and the record sorters get their
// shares of what is left, at least 1/8 of the budget (so strings beyond 7/8
// of the budget are beyond it). Resource tables are held in memory too,
// uncounted (they grow with processes and threads).
#ifndef TRACETABLE_STORE_TABLE_BUILDER_H_
#define TRACETABLE_STORE_TABLE_BUILDER_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "format/tracetable.pb.h"
#include "store/args_writer.h"
#include "store/event_sink.h"
#include "store/external_sorter.h"
#include "store/memory_profile_builder.h"
#include "store/output_claim.h"
#include "store/flow_index_writer.h"
#include "store/search_index_writer.h"
#include "store/shared_strings.h"
#include "store/sorted_runs.h"
#include "store/sort_record.h"

namespace tracetable {

// Where a table's summary bins lie: aligned at min_ts (relative ps), at
// zoom levels 0..num_levels-1 (format/levels.h).
struct TableGrid {
  int64_t min_ts = 0;
  int num_levels = 1;
};

struct BuildOptions {
  std::string output;                          // the .tracetable directory
  uint64_t memory_budget = uint64_t{1} << 30;  // bytes
  // Threads building tiles (0: one per core, at most 4); the table is the
  // same at any count.
  int tile_threads = 0;
  bool overwrite = false;                      // replace an existing table (never anything else)
  bool overwrite_unread = false;  // with overwrite: even one too damaged to read (CheckReplaceableUnread)
  // Paths of leftovers of killed ingests of this output, removed by Create().
  std::vector<std::string>* removed_leftovers = nullptr;
  // Called now and then during Finish(): what is happening, and a fraction.
  std::function<void(std::string_view stage, double fraction)> progress;
  // When set and true, Add() and Finish() stop with CancelledError soon
  // (a signal handler sets it; nothing else is safe to do there).
  const std::atomic<bool>* stop = nullptr;
  // Derive the memory profile (store/memory_profile_builder.h). Off only to
  // measure what it costs (bench/).
  bool memory_profile = true;
  // Range statistics aggregates (store/stats_index_writer.h): about this
  // many events per level-0 bucket; 0 writes none. Off by default: their
  // size grows with the distinct (track, name) pairs per bucket, which on
  // traces of nearly unique op names is about one row per event per level
  // (docs/performance.md, "Range statistics").
  uint64_t stats_bucket_events = 0;
  // Relative time 0 of the table, absolute ns; unset: the first timestamp
  // read. Shards of a run all take the run's origin (store/run_manifest.h)
  // so they share one time base; an input too far from it is shifted as the
  // inputs after the first are (docs/format.md, "Time").
  std::optional<int64_t> origin_ns;
  // The grid to build on when every event fits in it (min_ts <= the first
  // event, num_levels covering the last end from there); the table's own
  // grid otherwise (its span decides). The table's min_ts is then the
  // grid's. Shards of a run take the run's, so their summaries merge as one
  // table's would (store/run_manifest.h).
  std::optional<TableGrid> grid;
};

struct BuildStats {
  uint64_t events = 0;
  uint64_t spill_runs = 0;
  uint64_t tiles = 0;
  uint64_t tile_bytes = 0;
  // Bytes of files rewritten when the files were sealed (store/sorted_runs.h).
  uint64_t sealed_copy_bytes = 0;
  // One line per memory ID: allocations, deallocations and unpaired events.
  std::string memory_report;
};

class TableBuilder : public EventSink {
 public:
  static absl::StatusOr<std::unique_ptr<TableBuilder>> Create(BuildOptions options);
  ~TableBuilder() override;

  // EventSink.
  void BeginInput(std::string_view path, std::string_view host) override;
  uint32_t Intern(std::string_view s) override;
  // The string table ingest threads intern into (see store/shared_strings.h),
  // and the table's id of one of its ids, given at first use: interning by
  // shared id gives the ids Intern of its text would.
  SharedStrings* shared_strings() { return &shared_strings_; }
  uint32_t InternShared(uint32_t shared_id);
  // Fetches ahead what Add of an event named `name` (a table id) touches at
  // random: a trace's names are many (gen: 100k), used in no order.
  void PrefetchName(uint32_t name) const {
    if (name < name_events_.size()) __builtin_prefetch(&name_events_[name], 1);
  }
  absl::StatusOr<int64_t> ToRelativePs(int64_t abs_ns, int32_t sub_ns_ps) override;
  uint32_t ThreadTrack(IdToken pid, IdToken tid) override;
  uint32_t CounterTrack(IdToken pid, std::string_view counter,
                        std::string_view series) override;
  uint32_t AsyncTrack(IdToken pid, std::string_view name) override;
  uint32_t InstantTrack(IdToken pid, bool global) override;
  void SetProcessName(IdToken pid, std::string_view name) override;
  void SetProcessSortIndex(IdToken pid, int64_t index) override;
  void AddProcessLabel(IdToken pid, std::string_view label) override;
  void SetThreadName(IdToken pid, IdToken tid, std::string_view name) override;
  void SetThreadSortIndex(IdToken pid, IdToken tid, int64_t index) override;
  void SetInputField(std::string_view key, std::string_view json) override;
  absl::Status Add(const Event& event) override;
  void CountSkipped(std::string_view reason, uint64_t n = 1) override;
  void Warn(std::string_view message) override;

  // The input of the last BeginInput (store/pipelined_sink.h replays inputs
  // one after another): identities of processes and threads are scoped to it.
  int current_input() const { return current_input_; }
  // Records how many bytes input `index` (BeginInput order) had, for `info`.
  void SetInputBytesOf(int index, uint64_t bytes);
  void SetInputClockShift(int64_t shift_ns);
  int64_t origin_ns() const { return origin_ns_; }

  absl::Status Finish();
  const BuildStats& stats() const { return stats_; }
  // What was written to the table's metadata: skipped counts, warnings,
  // inputs (for the report at the end of an ingest).
  const proto::TableMeta& meta() const { return meta_; }
  // Safe to call from any thread (progress display).
  uint64_t events_added() const { return events_added_.load(std::memory_order_relaxed); }

 private:
  explicit TableBuilder(BuildOptions options);
  absl::Status Open();
  absl::Status CheckOutputFree() const;
  uint32_t Process(IdToken pid);
  uint32_t NewTrack(uint32_t process, proto::Track::Kind kind);
  // The track of an async group, made on first use.
  uint32_t AsyncGroupTrack(uint32_t group);
  // Async ids pair within their input: the match key of inputs after the
  // first gets the input's number (inputs of one table are separate traces,
  // whose ids mean nothing to each other).
  uint32_t InputAsyncKey(uint32_t key);
  // Bytes of the string tables: the shared one (with what producers charge
  // to it) and the builder's id maps.
  uint64_t StringBytes() const;
  // Gives `r` the next event id (read order), or fails past kMaxEventIds.
  absl::Status TakeId(SortRecord* r);
  using MainSorter = ExternalSorter<SortRecord, TrackTimeOrder>;

  // Takes the string tables' growth out of the record sorters' shares of
  // the budget (they spill sooner and give the pages back).
  absl::Status ChargeStrings();
  // The main sorter's limit once `records_left` records of the budget are
  // the record sorters' (3/4 of them, less what the memory profile holds).
  size_t MainRecordsLimit(size_t records_left) const;
  // Room the memory profile's records may take from the main sorter's
  // share, in memory records (0: none; they spill).
  absl::StatusOr<size_t> LendToMemoryProfile();
  // Writes the rewritten argument blocks (MergeArgs) as files of their own.
  absl::Status FlushMergedArgs();
  absl::Status Put(std::string key, std::string value);
  absl::Status MatchBeginEnd();
  // Thread time of an event as it is added: X and instants to thread_times_,
  // B/E into the record (see SortRecord) until they are matched.
  absl::Status NoteThreadTime(const Event& e, SortRecord* r);
  absl::Status WriteThreadTimes();
  // Adds the profile's counters to `counters`; runs beside the main sort.
  absl::Status DeriveMemoryProfile(MainSorter* counters);
  // One track's sorted records and the sorter holding them.
  struct TrackRecords {
    const MainSorter* sorter;
    MainSorter::Group group;
  };
  // Sorts the main records while the memory profile (if any) is derived
  // into `*counters`, and lists every track's records in track order.
  absl::StatusOr<std::vector<TrackRecords>> SortTracks(std::unique_ptr<MainSorter>* counters);
  // Threads building tiles, and writing the flow and search indexes.
  int TileThreads() const;
  absl::Status WriteTiles();
  // On the calling thread and TileThreads() - 1 more, beside the search
  // index and the strings (Finish), through writers of its own.
  absl::Status WriteFlowIndex();
  // Runs on a thread of its own beside the flow index and WriteStrings
  // (Finish): writes through a batch of its own, touches nothing else.
  absl::Status WriteSearchIndex(proto::SearchIndexInfo* info);
  // Runs on a thread of its own too (Finish): reads strings_, writes
  // through a writer of its own, gives the count of chunks it wrote.
  absl::Status WriteStrings(uint32_t* chunks);
  // Resources, then the metadata last.
  absl::Status WriteTables();
  absl::Status MergeArgs(uint64_t into, uint64_t from);
  void Progress(std::string_view stage, double fraction);
  // CancelledError once options.stop is set.
  absl::Status Stopped() const;
  // Progress every 2^20 records; Stopped() every 2^16.
  absl::Status Tick(uint64_t* done, uint64_t total, std::string_view stage);

  BuildOptions options_;
  std::string temp_dir_;
  std::unique_ptr<OutputClaim> claim_;  // released last
  std::unique_ptr<SortedRuns> runs_;
  std::unique_ptr<RunWriter> out_;  // the building thread's records
  // Argument blocks rewritten by MergeArgs, by block (nullopt: now empty).
  absl::btree_map<uint64_t, std::optional<std::string>> merged_args_;
  uint64_t merged_args_bytes_ = 0;
  std::unique_ptr<MainSorter> main_;
  std::unique_ptr<ExternalSorter<SortRecord, LessFn<MatchLess>>> match_;
  std::unique_ptr<ExternalSorter<ThreadTimeRecord, LessFn<IdLess>>> thread_times_;
  std::unique_ptr<SearchIndexWriter> search_index_;
  std::unique_ptr<FlowIndexWriter> flow_index_;
  std::unique_ptr<MemoryProfileBuilder> memory_;
  bool finished_ = false;

  // Strings: the table's, in the order of their first use, as shared ids
  // (their texts live once, in shared_strings_), and the table id of each
  // shared id (kNoString until first used).
  std::vector<uint32_t> strings_;
  SharedStrings shared_strings_;
  static constexpr uint32_t kNoString = UINT32_MAX;
  std::vector<uint32_t> table_string_of_shared_;
  // Events per name (table id; capped): how the search index's postings
  // spread over names, to split them evenly (SearchIndexWriter::Partition).
  std::vector<uint32_t> name_events_;
  uint64_t charged_strings_ = 0;  // StringBytes() when the limits were last set
  uint64_t lent_to_memory_ = 0;   // bytes of the main sorter's share lent to memory_

  // Resources. Keys are "<input>\0<pid>..." strings.
  proto::ResourceTable resources_;
  absl::flat_hash_map<std::string, uint32_t> process_ids_;
  absl::flat_hash_map<std::string, uint32_t> track_ids_;
  // Async events carry a group, (process, name), in Event::track until they
  // are matched; only then is it known which nests are outermost, and only
  // groups that hold one get a track (a name used only inside other slices
  // of its id makes no empty track).
  struct AsyncGroup {
    uint32_t process = 0;
    std::string name;
    uint32_t track = UINT32_MAX;  // none yet
  };
  std::vector<AsyncGroup> async_groups_;
  absl::flat_hash_map<std::string, uint32_t> async_group_ids_;
  absl::flat_hash_map<uint64_t, uint32_t> input_async_keys_;  // (input, key) -> key of that input

  proto::TableMeta meta_;
  int current_input_ = -1;
  bool have_origin_ = false;
  int64_t origin_ns_ = 0;
  int64_t min_ts_ = INT64_MAX;
  int64_t max_end_ = INT64_MIN;
  uint64_t next_id_ = 1;
  std::atomic<uint64_t> events_added_{0};
  std::unique_ptr<ArgsWriter> args_;  // the events' arguments, written on a thread of its own
  std::array<uint64_t, 32> kind_counts_{};  // by EventKind
  std::vector<uint64_t> input_events_;
  BuildStats stats_;
};

}  // namespace tracetable

#endif  // TRACETABLE_STORE_TABLE_BUILDER_H_
