// SortedRuns: the sorted files (.ldb) of a table being built, written straight
// by the threads that produce its records, and Seal(), which leaves them as
// one sorted run of disjoint files (what store/table_files.h reads).
//
// Why not a LevelDB database and a copy: the ingest's records would be written
// three times (log, compactions, the final copy; 10M events: 1.35 GB written
// for a 153 MB table) while most producers already emit their keys in order:
// the tile workers a track at a time, the argument blocks by event id, the
// indexes and the string table by their own ids. Each such stream becomes
// final files as it is written; Seal() rewrites only what needs it.
//
// Contract:
// - A RunWriter belongs to one thread. Keys put in increasing order go to its
//   current file; a key not above the last one goes to a side buffer, sorted
//   and written as a file of its own when full or at Close(), so any order is
//   correct and in-order streams cost nothing extra. A file also ends where
//   the key's first byte (its kind: docs/format.md) changes.
// - A key written more than once by one writer keeps the value written last
//   (files are ranked by when they were started; the side buffer keeps the
//   last put). Among writers the file started later wins: rewrite a key from
//   a writer started after the first value's writer was closed (as the
//   argument merge does). Delete() hides older values of a key; a file that
//   holds a deletion is always merged by Seal().
// - Seal(), after every writer is closed: files whose key ranges overlap,
//   files holding deletions and runs of small neighbours are merged into new
//   files (the newest value of each key, deletions dropped); the rest are
//   adopted as they are; a merge reads at most 64 files at once (an
//   overlapping component of more is first merged oldest-first in groups).
//   All are renamed "table-NNNNNN.ldb" in key order and listed
//   (store/file_list.h). Every file is synced before it is listed: on a
//   thread of its own as soon as it is closed (store/file_syncer.h).
// - Get() reads closed files (the argument merge reads blocks back).
#ifndef TRACETABLE_STORE_SORTED_RUNS_H_
#define TRACETABLE_STORE_SORTED_RUNS_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "store/file_syncer.h"

namespace leveldb {
class Cache;
class Table;
class RandomAccessFile;
}  // namespace leveldb

namespace tracetable {

inline constexpr char kSortedFilePrefix[] = "table-";

class SortedRuns;

class RunWriter {
 public:
  ~RunWriter();
  RunWriter(const RunWriter&) = delete;
  RunWriter& operator=(const RunWriter&) = delete;

  absl::Status Put(std::string_view key, std::string_view value);
  absl::Status Delete(std::string_view key);
  // Ends the current file: the next key starts a new one. Producers call it
  // where another writer's keys may fall between theirs (a tile worker
  // between two tracks that were not dispatched one after the other).
  absl::Status Cut();
  // Cut(), and the side buffer written. Needed before Seal() or Get().
  absl::Status Close();

 private:
  friend class SortedRuns;
  RunWriter(SortedRuns* runs, size_t side_bytes);
  struct OpenFile;
  absl::Status Add(std::string_view key, std::string_view value, bool deletion);
  absl::Status FlushSide();
  absl::Status EndFile(std::unique_ptr<OpenFile>* file);  // SortedRuns::EndFile

  SortedRuns* runs_;
  std::unique_ptr<OpenFile> file_;
  std::string last_key_;  // of the run, across files cut for size
  bool have_last_ = false;
  // Records below the run's last key, in put order.
  struct SideRecord {
    std::string key;
    std::string value;
    bool deletion = false;
  };
  std::vector<SideRecord> side_;
  size_t side_bytes_ = 0;
  size_t side_limit_;
};

class SortedRuns {
 public:
  // Files are written in `dir`, "run-NNNNNN.sst" until Seal().
  explicit SortedRuns(std::string dir);
  ~SortedRuns();

  // `side_bytes`: the writer's side buffer, written as a file when full.
  std::unique_ptr<RunWriter> NewWriter(size_t side_bytes = 8 << 20);

  // Records of a small producer (a short track's tiles: writing each to a
  // file of its own costs more than its bytes), with keys no one else
  // writes. Kept in memory and written in key order, a file per stretch
  // that no other file's range cuts, at Seal() or when they pass
  // `small_bytes` (set_small_bytes). Thread-safe.
  absl::Status AddSmall(std::vector<std::pair<std::string, std::string>> records);
  // Writes the small records held so far now, on the calling thread (Seal()
  // writes those added later): once their producers are done, a thread
  // with nothing else to do can take this off the end of the ingest.
  absl::Status FlushSmall();
  void set_small_bytes(uint64_t bytes) { small_limit_ = bytes; }

  // The newest value of `key` in closed files: NotFound if none or deleted.
  absl::Status Get(std::string_view key, std::string* value);

  // `tick` is called for every record copied; a non-OK result stops.
  absl::Status Seal(const std::function<absl::Status()>& tick);

  // Bytes written to files so far (for stats), and copied by Seal().
  uint64_t bytes_written() const;
  uint64_t bytes_copied() const { return bytes_copied_; }

  // Knobs for tests: files above `max_file_bytes` are cut; files below
  // `small_file_bytes` are merged with small neighbours.
  void set_file_sizes(uint64_t max_file_bytes, uint64_t small_file_bytes) {
    max_file_bytes_ = max_file_bytes;
    small_file_bytes_ = small_file_bytes;
  }
  uint64_t max_file_bytes() const { return max_file_bytes_; }

 private:
  friend class RunWriter;
  struct Run {
    std::string path;
    uint64_t rank = 0;  // start order: later is newer
    uint64_t bytes = 0;
    std::string smallest, largest;  // user keys
    bool deletions = false;
  };
  struct Reader;

  // A new file's path and rank.
  std::pair<std::string, uint64_t> StartFile();
  void AddRun(Run run);
  // Finishes `*file` (if any): its run joins the closed files, or, given
  // `out`, a merge's output (counted as copied).
  absl::Status EndFile(std::unique_ptr<RunWriter::OpenFile>* file, std::vector<Run>* out);
  absl::Status MergeInto(const std::vector<const Run*>& inputs, std::vector<Run>* out,
                         const std::function<absl::Status()>& tick);
  absl::StatusOr<Reader*> Open(const Run& run);
  // Merges the oldest files of an overlapping component until it has at
  // most kMaxMergeInputs.
  absl::Status Reduce(std::vector<const Run*>* component, std::deque<Run>* reduced,
                      const std::function<absl::Status()>& tick);
  static void RemoveFiles(const std::vector<const Run*>& runs);

  static constexpr size_t kMaxMergeInputs = 64;
  absl::Status WriteSmall(std::vector<std::pair<std::string, std::string>> records);

  std::string dir_;
  uint64_t max_file_bytes_ = 64 << 20;
  uint64_t small_file_bytes_ = 1 << 20;
  mutable std::mutex mu_;
  uint64_t next_rank_ = 0;
  std::vector<Run> runs_;  // closed files
  uint64_t bytes_copied_ = 0;
  std::mutex small_mu_;
  std::vector<std::pair<std::string, std::string>> small_;
  uint64_t small_bytes_ = 0;
  uint64_t small_limit_ = 32 << 20;
  leveldb::Cache* cache_ = nullptr;
  std::map<uint64_t, std::unique_ptr<Reader>> readers_;  // by rank, for Get()
  FileSyncer syncer_;  // every closed file, so that Seal() rarely waits
};

}  // namespace tracetable

#endif  // TRACETABLE_STORE_SORTED_RUNS_H_
