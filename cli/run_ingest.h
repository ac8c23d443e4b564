// Building runs (store/run_manifest.h) for `tracetable ingest`: one host's
// shard added to a run from any machine (--shard-of), or a whole run made
// from a folder of hosts with shards built in parallel (--jobs).
//
// Contract:
//  - Every shard is built with the run's origin, as an ordinary table under
//    RUN/shards/, through the table builder's own temp-folder-and-rename (so
//    a failed or killed build leaves the old shard or none, never half of
//    one), and only then entered in the manifest by UpdateRunManifest.
//  - A shard is replaced only with `force`; so is a run. Nothing is deleted
//    that is not a run, a shard table, or what this ingest made. A shard the
//    manifest lists is replaced even when missing or unreadable (a folder of
//    nothing but table files), so a damaged host can be ingested again.
//  - A run made from a folder is built in OUT.tmp-<pid> and renamed into
//    place whole (like a table): OUT is the old run or the new one, never a
//    run missing hosts; the first failed shard stops the others starting and
//    its host is named in the error.
#ifndef TRACETABLE_CLI_RUN_INGEST_H_
#define TRACETABLE_CLI_RUN_INGEST_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ingest/input.h"
#include "store/run_manifest.h"
#include "store/table_builder.h"

namespace tracetable::cli {

struct ShardOptions {
  uint64_t memory_budget = uint64_t{1} << 30;  // for one shard
  int threads = 1;                             // parsing and tile threads for one shard
  bool strict = false;
  bool memory_profile = true;
  bool force = false;
  // Range aggregates (BuildOptions::stats_bucket_events; 0: none): a run's
  // range statistics use each shard's (query/run_range_stats.h).
  uint64_t stats_bucket_events = 0;
  // With force: the shard's folder is the one the run's manifest names for
  // its host, so it is replaced even when too damaged to read.
  bool listed = false;
  const std::atomic<bool>* stop = nullptr;
  // The run's summary grid, used when the shard's events fit in it.
  std::optional<TableGrid> grid;
};

struct ShardResult {
  RunShardInfo info;
  double seconds = 0;
  int warnings = 0;         // TableMeta.warnings of the shard
  uint64_t skipped = 0;     // sum of its skipped_counts
  bool extends_grid = false;  // --shard-of: off the grid of the run's other shards
};

// The grid one table of the shards' events would have: aligned at their
// earliest start, levels for the whole span (shards without events ignored);
// nullopt when no shard has events.
std::optional<TableGrid> RunGrid(const std::vector<RunShardInfo>& shards);
bool OnGrid(const RunShardInfo& shard, const TableGrid& grid);

// The host a shard of `input` is filed under: `given`, else the file name
// without its trace extensions.
std::string ShardHost(const InputFile& input, const std::string& given);

// Builds `input` as the shard of `host` in the run folder `run` (which must
// exist), relative to `origin_ns`; does not touch the manifest.
absl::StatusOr<ShardResult> BuildShard(const InputFile& input, const std::string& run,
                                       const std::string& host, int64_t origin_ns,
                                       const ShardOptions& options);

// `ingest INPUT --shard-of RUN`: adds (or with force replaces) the shard of
// `host` (empty: from the file name), creating the run if RUN is absent or an
// empty folder. The origin is the run's; a new run takes `origin_ns` or the
// input's first timestamp. The shard takes the run's grid if its events fit
// in it; one that extends the run's span has its own (`extends_grid`).
absl::StatusOr<ShardResult> IngestShardOf(const InputFile& input, const std::string& run,
                                          const std::string& host, std::optional<int64_t> origin_ns,
                                          const ShardOptions& options);

// `ingest FOLDER -o OUT` with several hosts (or --run): one shard per input,
// `jobs` at a time, then the shards not on the run's grid (RunGrid) once
// more on it, so the run answers as one table of the inputs would; each with options.memory_budget / jobs and
// max(1, options.threads / jobs) parsing threads. Origin: `origin_ns` or the
// first input's first timestamp. `on_shard` is called (from the building
// threads, one at a time) as each shard is done.
absl::StatusOr<RunManifest> IngestRun(const std::vector<InputFile>& inputs, const std::string& out,
                                      int jobs, std::optional<int64_t> origin_ns,
                                      const ShardOptions& options,
                                      const std::function<void(const ShardResult&)>& on_shard);

// `ingest --regrid RUN`: rebuilds, from their recorded inputs, the shards
// not on the grid of all the run's shards (after hosts were added with
// --shard-of, each on the grid the run had then), `jobs` at a time; returns
// how many. A shard whose input is gone fails naming its host. Without
// options.stats_bucket_events a rebuilt shard keeps range aggregates of
// about the bucket size it had (none if it had none).
absl::StatusOr<int> RegridRun(const std::string& run, int jobs, const ShardOptions& options,
                              const std::function<void(const ShardResult&)>& on_shard);

}  // namespace tracetable::cli

#endif  // TRACETABLE_CLI_RUN_INGEST_H_
