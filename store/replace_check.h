// CheckReplaceable: whether `ingest --force` may replace what is at a path.
// Only a tracetable may be replaced: a folder holding nothing but a table's
// files (TABLEFILES and sorted .ldb files; for version-4 tables LevelDB's
// CURRENT, MANIFEST-*, LOG, LOCK and .log too) whose metadata record reads as
// TableMeta. Anything else (a file, a folder with other things in it, a
// table too damaged to read) is refused, whatever the flags: the ingest never
// deletes what it did not create.
//
// CheckReplaceableUnread is for a table the caller can vouch was made by an
// ingest (a run's shard at the folder its manifest names): the same folder
// and file-name rules, but its files are not read, so a shard too damaged to
// open can still be replaced.
#ifndef TRACETABLE_STORE_REPLACE_CHECK_H_
#define TRACETABLE_STORE_REPLACE_CHECK_H_

#include <string>

#include "absl/status/status.h"

namespace tracetable {

// OK if `path` is a tracetable; FailedPrecondition saying why not otherwise.
absl::Status CheckReplaceable(const std::string& path);
absl::Status CheckReplaceableUnread(const std::string& path);

}  // namespace tracetable

#endif  // TRACETABLE_STORE_REPLACE_CHECK_H_
