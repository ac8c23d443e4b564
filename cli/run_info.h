// `info` and `verify` of a run (store/run_manifest.h).
//
// Info reads only the manifest (a 1,000-host run answers without opening a
// shard). Verify reads the manifest, then every shard whole with the table
// verifier, and checks each against its manifest entry (table identity,
// origin, span and counts); a missing, corrupt or mismatched shard is named
// by its host, and the other hosts are still checked.
#ifndef TRACETABLE_CLI_RUN_INFO_H_
#define TRACETABLE_CLI_RUN_INFO_H_

#include <functional>
#include <string>

#include "store/run_manifest.h"
#include "store/table.h"

namespace tracetable::cli {

// Prints the run as text, or with `json` as one JSON object; exit code.
int PrintRunInfo(const std::string& path, bool json);

// Checks a run; `verify_table` checks one opened shard whole and returns the
// count of its errors (printing them). Exit code: 0 only if all is sound.
int VerifyRun(const std::string& path, const std::function<uint64_t(const Table&)>& verify_table);

// The differences between a shard's entry and the shard itself ("" if none).
std::string CompareShard(const RunShardInfo& entry, int64_t run_origin_ns, const Table& shard);

}  // namespace tracetable::cli

#endif  // TRACETABLE_CLI_RUN_INFO_H_
