// Table: a .tracetable opened for reading.
//
// Open() validates that the directory holds a tracetable of a format version
// this build reads, checks its metadata (store/meta_check.h) and loads the
// metadata, the resource table and the string table into memory (they are
// small next to the events). Tiles and arguments are read on demand through
// a block cache. A table is immutable once written: reading never writes to
// its folder nor locks it (store/table_files.h), so any number of processes
// read it at once; every block is checksum-verified and damage is a
// "corrupt table" DataLoss error. All const methods are safe to call from
// several threads.
#ifndef TRACETABLE_STORE_TABLE_H_
#define TRACETABLE_STORE_TABLE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "format/flow_id.h"
#include "format/keys.h"
#include "format/thread_time_codec.h"
#include "format/tile_codec.h"
#include "format/tracetable.pb.h"

namespace leveldb {
class Cache;
class Iterator;
}  // namespace leveldb

namespace tracetable {

struct ReadStats {
  uint64_t tiles = 0;
  uint64_t bytes = 0;
};

class TableFiles;
class RunShards;

class Table {
 public:
  struct Options {
    size_t cache_bytes = 64 << 20;
    // A run (store/run_table.h) keeps at most this many shards open at once.
    size_t max_open_shards = 64;
    // When set, blocks go to this cache (not owned; it outlives the table)
    // instead of one of cache_bytes of the table's own: a run's shards share
    // one, so memory stays bounded however many shards it has.
    leveldb::Cache* shared_cache = nullptr;
    // False: the string table is not loaded (String() answers empty). A
    // run's shards are opened so: the run maps their string ids to its own
    // table (store/run_shards.h) and never asks a shard for a string.
    bool load_strings = true;
  };
  // A folder holding a run manifest (store/run_manifest.h) opens as the run's
  // one logical table (store/run_table.h); any other as a single table.
  static absl::StatusOr<std::unique_ptr<Table>> Open(const std::string& path,
                                                     const Options& options);
  static absl::StatusOr<std::unique_ptr<Table>> Open(const std::string& path) {
    return Open(path, Options());
  }
  ~Table();

  const std::string& path() const { return path_; }
  const proto::TableMeta& meta() const { return meta_; }
  const proto::ResourceTable& resources() const { return resources_; }
  // What tells this table apart from any other (and from another ingest of
  // the same trace): TableMeta.table_id, or for tables written before it
  // existed, "m" + a checksum of their metadata record. Stable for the life of
  // the table's files.
  const std::string& identity() const { return identity_; }
  std::string_view String(uint32_t id) const {
    return id < strings_.size() ? std::string_view(strings_[id]) : std::string_view();
  }
  size_t num_strings() const { return strings_.size(); }
  // The text of a flow id (format/flow_id.h): a number's decimal, else its
  // string.
  std::string FlowIdText(uint32_t id) const {
    return IsNumericFlowId(id) ? NumericFlowIdText(id) : std::string(String(id));
  }

  // Start time (relative ps) of a tile.
  int64_t TileStart(const TileKey& key) const {
    return meta_.min_ts() + static_cast<int64_t>(key.start);
  }

  // Appends the rows of (track, section, level) from every tile that may hold
  // a row starting in [from, to]: the tiles starting in that range and the
  // one before. Callers filter rows by time.
  absl::Status ReadTiles(uint32_t track, TileSection section, int level,
                         int64_t from, int64_t to,
                         std::vector<TileRow>* rows, ReadStats* stats) const;

  // The JSON arguments of an event, or NotFound.
  absl::StatusOr<std::string> Args(uint64_t event_id) const;
  // The thread time (tts/tdur, ps) of an event, or NotFound.
  absl::StatusOr<ThreadTimeEntry> ThreadTime(uint64_t event_id) const;

  // OK while path() is still the folder this table was opened from; an
  // error once it was removed or replaced (e.g. by `ingest --force`), after
  // which answers would come from files no longer on disk. One stat(2).
  absl::Status CheckStillOnDisk() const;

  // The record of `key`: NotFound, or DataLoss if the table is damaged.
  absl::Status Get(std::string_view key, std::string* value) const;
  // All records in key order; status() reports damage.
  std::unique_ptr<leveldb::Iterator> NewIterator() const;

  // Set when this table is a run of shards read as one (store/run_table.h).
  const RunShards* run() const { return run_.get(); }

 private:
  friend class RunTableMaker;
  Table() = default;
  absl::Status Load(bool load_strings);
  static absl::StatusOr<std::unique_ptr<Table>> OpenSingle(const std::string& path,
                                                           const Options& options);

  std::string path_;
  std::unique_ptr<leveldb::Cache> cache_;
  std::unique_ptr<TableFiles> files_;
  proto::TableMeta meta_;
  std::string identity_;
  uint64_t folder_dev_ = 0, folder_ino_ = 0;
  proto::ResourceTable resources_;
  std::vector<std::string> strings_;
  std::shared_ptr<const RunShards> run_;
};

}  // namespace tracetable

#endif  // TRACETABLE_STORE_TABLE_H_
