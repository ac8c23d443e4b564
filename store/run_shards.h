// RunShards: the reads of a run's one logical table (store/run_table.h),
// routed to the shard that holds them.
//
// A run's merged view gives every shard's tracks, strings, event ids and
// memory IDs global numbers; this class keeps the maps between the two and
// answers Table's reads for a run: it opens the shard holding the track or
// id (at most max_open_shards stay open, least recently used closed first;
// a shard in use by a caller stays alive until it is done), asks it in the
// shard's own numbers and times, and translates the rows back. A shard that
// cannot be opened, is damaged or was replaced is an error naming its host;
// reads that never touch it still answer. Thread-safe.
#ifndef TRACETABLE_STORE_RUN_SHARDS_H_
#define TRACETABLE_STORE_RUN_SHARDS_H_

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "store/table.h"

namespace leveldb {
class Cache;
}

namespace tracetable {

class CoarseTiles;

struct RunShardMap {
  std::string host;
  std::string dir;       // absolute
  std::string table_id;  // the identity the shard had when the run was opened
  int64_t time_offset = 0;  // ps added to the shard's relative times
  // Event ids: local ids 1..read_ids (events read from the input) become
  // read_base + id; later local ids (derived at ingest) become
  // derived_base + id - read_ids, after every shard's read ids, as one
  // ingest of all inputs numbers them.
  uint64_t read_ids = 0, read_base = 0, derived_base = 0, derived_ids = 0;
  std::vector<uint32_t> strings;        // local string id -> global
  std::vector<uint32_t> async_strings;  // async keys: -> global "key|input N" (empty: same as strings)
  std::vector<uint32_t> tracks;         // local track id -> global
  // Written before numeric flow ids (format/flow_id.h): its decimal flow ids
  // are strings, which the run turns into numbers as other shards hold them.
  bool flow_numbers_as_strings = false;
  uint32_t memory_base = 0, num_memory = 0;  // its memory IDs' global indexes
  int64_t min_ts = 0, max_end = 0;      // the shard's own TableMeta span
  int num_levels = 0;
  // It has range aggregates (TableMeta.stats_index), and begins without an
  // end (kept as incomplete: they last to its own end, in the run to the
  // run's), both from its TableMeta.
  bool stats_index = false, incomplete = false;
  // Its tiles at its coarsest levels, from the run's view (null: none):
  // reads they cover open no shard (store/run_view_coarse.h).
  std::shared_ptr<const CoarseTiles> coarse;
};

class RunShards {
 public:
  RunShards(std::string run_path, std::vector<RunShardMap> shards, const Table::Options& options);
  ~RunShards();

  // Called once while the merged view is built (store/run_table.cc).
  struct TrackHome {
    uint32_t shard = 0, local = 0;  // local = UINT32_MAX: the shard did not open
    bool async = false;             // its rows' flow_id is an async key
  };
  void SetTrackHomes(std::vector<TrackHome> homes) { homes_ = std::move(homes); }
  void SetGlobalView(const proto::TableMeta* meta, const std::vector<std::string>* strings) {
    meta_ = meta;
    strings_ = strings;
  }
  const std::vector<RunShardMap>& shards() const { return shards_; }
  // Where global track `track` lives (track < the run's track count).
  const TrackHome& home(uint32_t track) const { return homes_[track]; }
  std::vector<RunShardMap>& mutable_shards() { return shards_; }

  // The open shard `i` (opening it, possibly closing the least recently
  // used one). Errors name the host.
  absl::StatusOr<std::shared_ptr<const Table>> Acquire(size_t i) const;
  // Shard `i` opened on its own with its string table (Acquire's shards
  // have none), for building the merged view. Errors name the host.
  absl::StatusOr<std::unique_ptr<Table>> OpenWithStrings(size_t i) const;
  // How many shards OpenWithStrings opened: 0 when the run opened from a
  // view that matches its manifest.
  size_t opened_with_strings() const { return opened_with_strings_; }
  size_t open_shards() const;
  // How many times a shard was opened for reads (Acquire): 0 while every
  // read was answered from the view's coarse tiles.
  size_t opened_for_reads() const { return opened_for_reads_; }
  // How many tile reads went to a shard rather than to the view's coarse
  // tiles. (A window may still open a shard for what tiles do not hold: the
  // thread time of an event it answers, store/run_shards.cc ThreadTime.)
  size_t shard_tile_reads() const { return shard_tile_reads_; }

  absl::Status ReadTiles(uint32_t track, TileSection section, int level, int64_t from, int64_t to,
                         std::vector<TileRow>* rows, ReadStats* stats) const;
  // OK while the run's manifest is the one it was opened with (none counts
  // as unchanged for runs opened from a list of shards); an error once a
  // shard was added or replaced (the manifest is replaced by rename).
  absl::Status CheckManifest() const;

  absl::StatusOr<std::string> Args(uint64_t event_id) const;
  absl::StatusOr<ThreadTimeEntry> ThreadTime(uint64_t event_id) const;
  // Records whose keys hold global numbers: flow blocks ("F") and memory
  // segments ("Y"), rebuilt from the shards' own. Other keys are
  // Unimplemented: nothing reads them from a run.
  absl::Status Get(std::string_view key, std::string* value) const;

  // A row read from shard `i`'s track that is global track `track`, in the
  // run's numbers and times (as ReadTiles gives it).
  void RowToGlobal(size_t i, uint32_t track, TileRow* r) const {
    ToGlobal(shards_[i], track < homes_.size() && homes_[track].async, r);
  }
  // The run's end (max_end of the merged meta): incomplete events run to it.
  int64_t run_max_end() const;

  // The global id of a shard's local event id and back.
  uint64_t GlobalId(const RunShardMap& s, uint64_t local) const;
  bool LocalId(uint64_t global, size_t* shard, uint64_t* local) const;

  // `s` with shard i's host and folder in front, so an error from inside a
  // shard says which host of the run it came from.
  absl::Status Named(size_t i, const absl::Status& s) const;

 private:
  absl::StatusOr<std::unique_ptr<Table>> Open(size_t i, const Table::Options& options) const;
  // The shard's local id of a global string id (0: it has none). The
  // reverse map is built on first use: only flow lookups need it.
  uint32_t LocalString(size_t i, uint32_t global) const;
  // The same for a global flow id (format/flow_id.h).
  uint32_t LocalFlow(size_t i, uint32_t global) const;
  // A shard's flow id (under `strings`: its string map for that column) as
  // the run's.
  uint32_t GlobalFlow(const RunShardMap& s, const std::vector<uint32_t>& strings, uint32_t id) const;
  std::string ManifestPath() const;
  absl::Status GetFlowBlock(uint32_t block, std::string* value) const;
  absl::Status GetMemorySegment(uint32_t id, uint32_t segment, std::string* value) const;
  void ToGlobal(const RunShardMap& s, bool async, TileRow* r) const;

  std::string run_path_;
  uint64_t manifest_dev_ = 0, manifest_ino_ = 0;  // 0: no manifest
  std::vector<RunShardMap> shards_;
  std::vector<TrackHome> homes_;  // by global track id
  const proto::TableMeta* meta_ = nullptr;
  const std::vector<std::string>* strings_ = nullptr;
  Table::Options shard_options_;
  std::unique_ptr<leveldb::Cache> cache_;
  size_t capacity_;
  mutable std::mutex mu_;
  mutable std::list<std::pair<size_t, std::shared_ptr<const Table>>> lru_;  // front = most recent
  mutable absl::flat_hash_map<size_t, decltype(lru_)::iterator> open_;
  mutable std::atomic<size_t> opened_with_strings_{0};
  mutable std::atomic<size_t> opened_for_reads_{0};
  mutable std::atomic<size_t> shard_tile_reads_{0};
  mutable std::mutex reverse_mu_;
  mutable std::vector<std::unique_ptr<absl::flat_hash_map<uint32_t, uint32_t>>> local_strings_;
  // Numeric flow id -> the global string of its text (from older shards).
  mutable std::unique_ptr<absl::flat_hash_map<uint32_t, uint32_t>> number_strings_;
};

}  // namespace tracetable

#endif  // TRACETABLE_STORE_RUN_SHARDS_H_
