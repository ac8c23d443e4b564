// WriteSortedFiles: the last write of an ingest. Copies every record of the
// build database, in key order and newest version only, into new sorted
// files "table-NNNNNN.ldb" (LevelDB's table format, internal keys with their
// sequence numbers) of at most `max_file_bytes` each.
//
// Why not LevelDB's CompactRange: it may leave overlapping files on several
// levels (a memtable flushed during the compaction lands beside it), which
// only LevelDB's manifest can order. These files are one sorted run of
// distinct keys, so a reader needs nothing but the file list
// (store/table_files.h). The copy costs what a full compaction costs.
#ifndef TRACETABLE_STORE_SORTED_FILES_H_
#define TRACETABLE_STORE_SORTED_FILES_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"

namespace leveldb {
class DB;
}  // namespace leveldb

namespace tracetable {

inline constexpr char kSortedFilePrefix[] = "table-";

// `tick` is called for every record; a non-OK result stops the copy.
absl::Status WriteSortedFiles(leveldb::DB* db, const std::string& dir, uint64_t max_file_bytes,
                              const std::function<absl::Status()>& tick);

}  // namespace tracetable

#endif  // TRACETABLE_STORE_SORTED_FILES_H_
