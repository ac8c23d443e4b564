// RUN.view: what opening a run needs from its shards, kept beside its
// manifest so a run opens without opening a shard (docs/format.md, "Runs",
// "`RUN.view` bytes").
//
// Contract:
//  - The view holds, per shard, its identity, TableMeta and ResourceTable,
//    and the run's one string table with each shard's map into it (and of
//    its async keys, "key|input N"), made as the run reader makes them
//    (RunStrings). A table is immutable, so what is recorded under a shard's
//    identity stays true while a shard of that identity exists.
//  - A reader uses the view whole only when its shards are the manifest's,
//    identity for identity in order (Matches): then nothing is interned or
//    opened. Otherwise (stale) it uses the entries whose identity a manifest
//    entry names and opens the other shards, so a stale view costs time,
//    never a wrong answer; a shard is checked against its identity again
//    when it is opened for reads.
//  - DecodeRunView never returns a damaged view: magic + length + CRC-32 +
//    framed fields, every entry re-checked as a table's own metadata is
//    (store/meta_check.h) and every map entry in range; anything else is
//    DataLoss "corrupt run view".
//  - Each entry also holds the shard's tiles at its coarsest levels
//    (store/run_view_coarse.h), so a run answers its whole-run windows
//    without opening a shard. Views of version 1 have none: their entries
//    are used as before and reads of those levels open the shards; the next
//    manifest update fills them in.
//  - Only UpdateRunManifest (store/run_manifest.h) writes it, under the
//    run's lock, right after RUN; entries of the old view are reused by
//    identity, so adding a host opens only that host's shard.
#ifndef TRACETABLE_STORE_RUN_VIEW_H_
#define TRACETABLE_STORE_RUN_VIEW_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "format/tracetable.pb.h"
#include "store/run_view_coarse.h"

namespace tracetable {

class Table;
struct RunManifest;

inline constexpr char kRunViewFileName[] = "RUN.view";
inline constexpr uint32_t kRunViewFormatVersion = 2;

// The run's string table, made shard by shard as one ingest of the shards'
// inputs interns (store/table_builder.cc): each shard's strings in its own
// order, then for shard N > 0 with async tracks its keys as "key|input N".
class RunStrings {
 public:
  RunStrings() { Intern(""); }
  // Continues a table whose first strings are `prefix` (prefix[0] = "").
  explicit RunStrings(std::vector<std::string> prefix);
  void AddShard(size_t index, const std::vector<std::string>& local, bool async, std::vector<uint32_t>* map,
                std::vector<uint32_t>* async_map);
  // AddShard of the shard whose strings are `old`'s at `local` (its map in
  // another table `old`): the same ids, but each string of `old` is looked up
  // once, through `seen` (old id -> id here, UINT32_MAX: not yet; sized to
  // old), not once per shard using it.
  void AddMapped(size_t index, const std::vector<std::string>& old, const std::vector<uint32_t>& local, bool async,
                 std::vector<uint32_t>* seen, std::vector<uint32_t>* map, std::vector<uint32_t>* async_map);
  std::vector<std::string> Take() { return std::move(strings_); }

 private:
  uint32_t Intern(std::string_view s);
  absl::flat_hash_map<std::string, uint32_t> ids_;
  std::vector<std::string> strings_;
};

bool HasAsyncTracks(const proto::ResourceTable& resources);

struct ViewShard {
  std::string identity;  // Table::identity(): the manifest entry's table_id
  proto::TableMeta meta;
  proto::ResourceTable resources;
  std::vector<uint32_t> strings;        // local string id -> RunView::strings
  std::vector<uint32_t> async_strings;  // async keys: local id -> "key|input N" (empty: none)
  std::shared_ptr<const CoarseTiles> coarse;  // null: none
  // Whether `coarse` was collected (false for entries of a version-1 view:
  // the next MakeRunView opens the shard to collect them).
  bool coarse_known = false;
};

struct RunView {
  std::string run_id;       // the manifest's: a view of another run is ignored
  uint64_t generation = 0;  // the manifest generation it was written with
  std::vector<std::string> strings;
  std::vector<ViewShard> shards;

  // The entry recorded for `identity`, or null.
  const ViewShard* Find(std::string_view identity) const;
  // Its shards are exactly these identities, in this order.
  bool Matches(const std::vector<std::string>& identities) const;
  // A shard's own string table, from its map.
  std::vector<std::string> LocalStrings(const ViewShard& shard) const;
  void Index();  // (re)builds what Find uses; Decode and Make call it

 private:
  absl::flat_hash_map<std::string, size_t> by_identity_;
};

// `version` 1 (for tests of old views) leaves the coarse tiles out.
std::string EncodeRunView(const RunView& view, uint32_t version = kRunViewFormatVersion);
absl::StatusOr<RunView> DecodeRunView(std::string_view bytes);

// NotFound when the run has no view; DataLoss "corrupt run view" when it
// does not check.
absl::StatusOr<RunView> ReadRunView(const std::string& run_path);

// The view of `manifest`: its shards in manifest order, taken from `old`
// (may be null; its entries are moved out) by identity or read by opening
// the shard. A shard that does not open, or whose identity is not its
// entry's, is left out (the view then does not match the manifest, and
// readers open what it lacks).
//
// The run's strings are interned shard by shard, so the entries of the
// longest run of leading shards whose identities are old's, in old's order,
// are old's as they are (maps included) and the string table starts with
// the strings they use: only the shards after them are interned again. So
// appending a host costs one shard's strings, not the run's.
RunView MakeRunView(const std::string& run_path, const RunManifest& manifest, RunView* old);

}  // namespace tracetable

#endif  // TRACETABLE_STORE_RUN_VIEW_H_
