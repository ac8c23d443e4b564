// EditTable: rewrites a finished table's records the way a tool (or damage)
// could, for tests of what readers do with tables the ingest never writes.
// The records are read, edited in a map, and written back as one sorted file
// with a fresh file list, so the result is well-formed at the file level and
// only its contents are strange.
#ifndef TRACETABLE_TESTS_TABLE_EDIT_H_
#define TRACETABLE_TESTS_TABLE_EDIT_H_

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "leveldb/env.h"
#include "leveldb/options.h"
#include "leveldb/table_builder.h"
#include "store/file_list.h"
#include "store/internal_key.h"
#include "store/table_files.h"

namespace tracetable {

inline void EditTable(const std::string& path,
                      const std::function<void(std::map<std::string, std::string>*)>& edit) {
  namespace fs = std::filesystem;
  std::map<std::string, std::string> records;
  {
    absl::StatusOr<std::unique_ptr<TableFiles>> files = TableFiles::Open(path, nullptr);
    ASSERT_TRUE(files.ok()) << files.status();
    std::unique_ptr<leveldb::Iterator> it = (*files)->NewIterator();
    for (it->SeekToFirst(); it->Valid(); it->Next()) records[it->key().ToString()] = it->value().ToString();
    ASSERT_TRUE(it->status().ok());
  }
  edit(&records);
  for (const fs::directory_entry& e : fs::directory_iterator(path)) {
    if (e.path().extension() == ".ldb") fs::remove(e.path());
  }
  leveldb::WritableFile* raw = nullptr;
  ASSERT_TRUE(leveldb::Env::Default()->NewWritableFile((fs::path(path) / "900000.ldb").string(), &raw).ok());
  std::unique_ptr<leveldb::WritableFile> file(raw);
  leveldb::Options opts;
  opts.comparator = InternalKeyOrder();
  leveldb::TableBuilder builder(opts, file.get());
  for (const auto& [k, v] : records) builder.Add(MakeInternalKey(k, 1), v);
  ASSERT_TRUE(builder.Finish().ok());
  ASSERT_TRUE(file->Close().ok());
  ASSERT_TRUE(WriteFileList(path).ok());
}

}  // namespace tracetable

#endif  // TRACETABLE_TESTS_TABLE_EDIT_H_
