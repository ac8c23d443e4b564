// TableFiles: a finished table's records, read straight from its sorted files
// (.ldb) with leveldb::Table, without opening a LevelDB DB.
//
// Contract: opening and reading never write to the folder and take no lock,
// so any number of processes read one table at once. Every block read is
// checksum-verified; a damaged, missing, truncated or overlapping file is a
// "corrupt table" DataLoss error, never an answer.
//
// A finished table is fully compacted: its files hold disjoint key ranges
// and each key once, so they are read as one sorted run (files in key order)
// rather than merged. Open() checks that and refuses anything else.
//
// Which files: those in TABLEFILES (store/file_list.h) for version-5 tables;
// every *.ldb for version-4 tables, which had none (written by LevelDB and
// fully compacted, so those are exactly the live files; read only when they
// happen to form one run, else a "re-ingest" error).
#ifndef TRACETABLE_STORE_TABLE_FILES_H_
#define TRACETABLE_STORE_TABLE_FILES_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "leveldb/iterator.h"

namespace leveldb {
class Cache;
class RandomAccessFile;
class Table;
}  // namespace leveldb

namespace tracetable {

class TableFiles {
 public:
  // `cache` (may be null) must outlive the result.
  static absl::StatusOr<std::unique_ptr<TableFiles>> Open(const std::string& dir,
                                                          leveldb::Cache* cache);
  ~TableFiles();

  // The value of `key`: NotFound, or DataLoss if a block is damaged.
  absl::Status Get(std::string_view key, std::string* value) const;

  // An iterator over user keys in order. Thread-safe to create; each iterator
  // belongs to one thread. status() reports damage (as a leveldb::Status).
  std::unique_ptr<leveldb::Iterator> NewIterator() const;

  // True if the table came without a file list (format version 4).
  bool legacy() const { return legacy_; }

  struct File {
    std::string name;
    std::unique_ptr<leveldb::RandomAccessFile> file;
    std::unique_ptr<leveldb::Table> table;
    std::string smallest, largest;  // user keys
  };

 private:
  TableFiles() = default;
  absl::Status OpenFile(const std::string& name, uint64_t bytes, leveldb::Cache* cache);

  std::string dir_;
  std::vector<File> files_;  // by key
  bool legacy_ = false;
};

}  // namespace tracetable

#endif  // TRACETABLE_STORE_TABLE_FILES_H_
