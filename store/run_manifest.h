// Run manifests: a run is a folder holding one ordinary table per host (a
// shard, under shards/) and the file RUN that lists them (docs/format.md,
// "Runs"). A folder with RUN is a run; a folder with TABLEFILES is a table.
//
// Contract:
//  - ReadRunManifest never returns a damaged or partial manifest: RUN is
//    magic + length + CRC-32 + a RunManifest protobuf, and anything that does
//    not check is DataLoss "corrupt run manifest". It takes no lock: RUN is
//    only ever replaced by rename, so a reader sees one whole version.
//  - UpdateRunManifest is the only writer. It holds an exclusive flock(2) on
//    RUN.lock for read–edit–write, writes RUN.tmp-<pid>, fsyncs it, renames
//    it over RUN and fsyncs the folder, so concurrent writers (processes or
//    machines sharing a POSIX-locking file system) of different shards never
//    lose each other's entries. The edit sees the current manifest (empty,
//    with format_version set, when the run has none yet) and may refuse by
//    returning an error, which leaves RUN untouched.
//  - Shards are kept in the order a single-table ingest of the same inputs
//    would read them (SortShards), so global ids can follow that order.
#ifndef TRACETABLE_STORE_RUN_MANIFEST_H_
#define TRACETABLE_STORE_RUN_MANIFEST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tracetable {

inline constexpr uint32_t kRunFormatVersion = 1;
inline constexpr char kRunFileName[] = "RUN";
inline constexpr char kRunLockName[] = "RUN.lock";
inline constexpr char kRunShardsDir[] = "shards";

struct RunShardInfo {
  std::string host;      // unique within the run
  std::string dir;       // relative to the run: shards/<escaped host>.tracetable
  std::string table_id;  // TableMeta.table_id of the shard
  int64_t min_ts = 0;    // relative to the run origin, ps
  int64_t max_end = 0;
  uint64_t num_events = 0;
  uint64_t event_ids = 0;  // ids 1..event_ids are the shard's (TableMeta.event_ids)
  uint32_t num_tracks = 0;
  uint32_t num_processes = 0;
  uint32_t num_levels = 0;
  std::string input_name;  // the input's file name: the order key
  std::string input_path;  // as given to the ingest
  uint64_t input_bytes = 0;
  // Clock alignment: ns added to the input's times (non-zero only when its
  // clock was > ~25 days from the run origin: it then starts at the origin).
  int64_t clock_shift_ns = 0;
};

struct RunManifest {
  uint32_t format_version = kRunFormatVersion;
  int64_t origin_ns = 0;  // absolute ns of relative 0 in every shard
  std::vector<RunShardInfo> shards;
  std::string run_id;       // 32 hex digits, drawn when the run was created
  uint64_t generation = 0;  // bumped by every update

  // The shard of `host`, or null.
  const RunShardInfo* Find(const std::string& host) const;
  // Adds `shard`, or replaces the one of the same host; keeps the order.
  void Put(RunShardInfo shard);
};

// True when `path` is a folder holding a RUN file.
bool IsRun(const std::string& path);

// NotFound when `run_path` has no RUN; DataLoss "corrupt run manifest" when
// RUN is damaged, of another version or inconsistent (duplicate hosts, a dir
// outside shards/).
absl::StatusOr<RunManifest> ReadRunManifest(const std::string& run_path);

// Creates `run_path` if needed, then edits its manifest atomically (see the
// contract above). A new run gets a fresh run_id; `generation` is bumped.
absl::Status UpdateRunManifest(const std::string& run_path,
                               absl::FunctionRef<absl::Status(RunManifest&)> edit);

// The bytes of RUN for `manifest`, and back (for tests and tools).
std::string EncodeRunManifest(const RunManifest& manifest);
absl::StatusOr<RunManifest> DecodeRunManifest(std::string_view bytes);

// OK if `path` is a run `ingest --force` may replace: RUN reads, and the
// folder holds nothing but RUN, RUN.lock and shards/ with shard tables (and
// the temporary folders of their ingests). FailedPrecondition otherwise.
absl::Status CheckRunReplaceable(const std::string& path);

// Sorts shards by (input_name, host): a single-table ingest of a folder reads
// its inputs in path order.
void SortShards(std::vector<RunShardInfo>* shards);

// A host name as a file name: [A-Za-z0-9._-] kept, every other byte %XX, and
// a leading '.' escaped, so distinct hosts never share a folder.
std::string EscapeHostName(const std::string& host);
// "shards/<escaped host>.tracetable".
std::string ShardDirFor(const std::string& host);

}  // namespace tracetable

#endif  // TRACETABLE_STORE_RUN_MANIFEST_H_
