// The file list of a finished table (format version 5): the text file
// "TABLEFILES" in the table folder naming every sorted file (.ldb) that holds
// the table's records, with its size in bytes.
//
// Why: a finished table is read without LevelDB's DB (no lock, no MANIFEST,
// no writes), so the reader needs to know which files make up the table and
// that none is missing or cut short. The ingest writes the list last, before
// the folder is renamed into place; its presence together with a readable
// TableMeta is what marks a folder as a tracetable.
#ifndef TRACETABLE_STORE_FILE_LIST_H_
#define TRACETABLE_STORE_FILE_LIST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tracetable {

inline constexpr char kFileListName[] = "TABLEFILES";

struct TableFile {
  std::string name;  // relative to the table folder
  uint64_t bytes = 0;
};

// Records every *.ldb file of `dir` in dir/TABLEFILES (written to a
// temporary name, synced, then renamed).
absl::Status WriteFileList(const std::string& dir);

// The list of `dir`; NotFound if it has none (a version-4 table), DataLoss
// if it cannot be parsed or a file is missing or has another size.
absl::StatusOr<std::vector<TableFile>> ReadFileList(const std::string& dir);

}  // namespace tracetable

#endif  // TRACETABLE_STORE_FILE_LIST_H_
