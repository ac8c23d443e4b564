// Opening a run of shards (one ordinary table per host) as one logical Table.
//
// The merged view is what one ingest of all the shards' inputs, in shard
// order, would have written: inputs and processes in shard order (out_pid =
// index + 1, names prefixed with the host when there are several shards),
// tracks numbered as that ingest numbers them (tracks read from the inputs,
// shard by shard; then async tracks, input by input in the order the ingest made them;
// then derived memory tracks), one string table, event ids after the ids of
// earlier shards, memory IDs concatenated, times on the run's origin. Reads
// go to the shard holding the track or id (store/run_shards.h), so every
// query over a Table answers a run unchanged. Opening reads each shard's
// metadata, resources and strings from the run's view (RUN.view,
// store/run_view.h) when it holds them for the identity the manifest names,
// so a run with a current view opens no shard: shards open on first read.
// A shard the view lacks is opened here (at most max_open_shards stay
// open); one that does not open becomes one placeholder track of its host
// whose reads fail with an error naming the host, so queries of other
// hosts still answer (a shard known from the view but gone fails the same
// way on its first read).
// A run has no search index of its own: search fans out to its shards'
// (query/run_search.h).
#ifndef TRACETABLE_STORE_RUN_TABLE_H_
#define TRACETABLE_STORE_RUN_TABLE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "store/table.h"

namespace tracetable {

struct RunView;

struct RunShardSource {
  std::string host;
  std::string dir;       // absolute, or relative to the working directory
  std::string table_id;  // expected identity; empty = any
};

// `origin_ns`: the run's relative 0 (shards built on another origin are
// shifted onto it). `view` (may be null, store/run_view.h): what it records
// of the sources' table_ids is used instead of opening those shards, and
// when it matches them all its string table is taken (moved) as the run's.
absl::StatusOr<std::unique_ptr<Table>> OpenRunTable(const std::string& run_path, int64_t origin_ns,
                                                    const std::vector<RunShardSource>& shards,
                                                    const Table::Options& options, RunView* view = nullptr);

// The run at `run_path` (a folder with a RUN manifest, store/run_manifest.h):
// its shards in manifest order, on its origin. A damaged manifest is
// DataLoss "corrupt run manifest".
absl::StatusOr<std::unique_ptr<Table>> OpenRun(const std::string& run_path, const Table::Options& options);

}  // namespace tracetable

#endif  // TRACETABLE_STORE_RUN_TABLE_H_
