// RUN.view: what opening a run needs from each shard, kept beside its
// manifest so a run opens without opening its shards (docs/format.md,
// "Runs", "`RUN.view` bytes").
//
// Contract:
//  - A shard's head is what the merged view (store/run_table.h) reads from
//    it: its identity, TableMeta, ResourceTable and string table. A table is
//    immutable, so a head recorded under a shard's identity stays true for as
//    long as a shard of that identity exists; a reader uses a head only for a
//    manifest entry of the same table_id (and the shard is checked against it
//    again when it is opened for reads), and opens the shard for any entry the
//    view lacks. So a stale view costs time, never a wrong answer.
//  - DecodeRunView never returns a damaged view: magic + length + CRC-32 +
//    framed protobufs, each head re-checked as a table's own metadata is
//    (store/meta_check.h); anything else is DataLoss "corrupt run view".
//  - The view is written only by UpdateRunManifest (store/run_manifest.h),
//    under the run's lock, right after RUN: heads of the old view are reused
//    by identity, so adding a host opens only that host's shard.
#ifndef TRACETABLE_STORE_RUN_VIEW_H_
#define TRACETABLE_STORE_RUN_VIEW_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "format/tracetable.pb.h"

namespace tracetable {

class Table;
struct RunManifest;

inline constexpr char kRunViewFileName[] = "RUN.view";
inline constexpr uint32_t kRunViewFormatVersion = 1;

struct ShardHead {
  std::string identity;  // Table::identity(): the manifest entry's table_id
  proto::TableMeta meta;
  proto::ResourceTable resources;
  std::vector<std::string> strings;  // the shard's string table, id 0 = ""
};

ShardHead HeadOf(const Table& table);

struct RunView {
  std::string run_id;       // the manifest's: a view of another run is ignored
  uint64_t generation = 0;  // the manifest generation it was written with
  std::vector<ShardHead> heads;

  // The head recorded for `identity`, or null.
  const ShardHead* Find(std::string_view identity) const;
  void Index();  // (re)builds what Find uses; Decode and Make call it

 private:
  absl::flat_hash_map<std::string, size_t> by_identity_;
};

std::string EncodeRunView(const RunView& view);
absl::StatusOr<RunView> DecodeRunView(std::string_view bytes);

// NotFound when the run has no view; DataLoss "corrupt run view" when it
// does not check.
absl::StatusOr<RunView> ReadRunView(const std::string& run_path);

// The view of `manifest`: one head per shard, in manifest order, reused from
// `old` (may be null) by identity or read by opening the shard. A shard that
// does not open, or whose identity is not its entry's, is left out (readers
// then open it, and report it as they always did).
RunView MakeRunView(const std::string& run_path, const RunManifest& manifest, const RunView* old);

}  // namespace tracetable

#endif  // TRACETABLE_STORE_RUN_VIEW_H_
