#include "store/table_files.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "format/absl_compat.h"
#include "leveldb/env.h"
#include "leveldb/options.h"
#include "leveldb/table.h"
#include "store/corruption.h"
#include "store/file_list.h"
#include "store/internal_key.h"
#include "store/pread_env.h"

namespace tracetable {
namespace fs = std::filesystem;
namespace {

leveldb::ReadOptions Verified() {
  leveldb::ReadOptions ro;
  ro.verify_checksums = true;
  return ro;
}

// The files of a table as one sorted run: a file's iterator at a time,
// internal keys shown as user keys, deletions (never in a finished table,
// but legal in the format) skipped.
class RunIterator : public leveldb::Iterator {
 public:
  explicit RunIterator(const std::vector<TableFiles::File>* files) : files_(files) {}

  bool Valid() const override { return status_.ok() && child_ && child_->Valid(); }
  void SeekToFirst() override {
    if (files_->empty()) return Clear();
    Enter(0);
    child_->SeekToFirst();
    SkipForward();
  }
  void SeekToLast() override {
    if (files_->empty()) return Clear();
    Enter(files_->size() - 1);
    child_->SeekToLast();
    SkipBackward();
  }
  void Seek(const leveldb::Slice& target) override {
    const std::string_view t(target.data(), target.size());
    auto it = std::lower_bound(files_->begin(), files_->end(), t,
                               [](const TableFiles::File& f, std::string_view k) { return f.largest < k; });
    if (it == files_->end()) return Clear();
    Enter(static_cast<size_t>(it - files_->begin()));
    child_->Seek(SeekKey(t));
    SkipForward();
  }
  void Next() override {
    child_->Next();
    SkipForward();
  }
  void Prev() override {
    child_->Prev();
    SkipBackward();
  }
  leveldb::Slice key() const override { return {user_key_.data(), user_key_.size()}; }
  leveldb::Slice value() const override { return child_->value(); }
  leveldb::Status status() const override {
    if (!status_.ok()) return status_;
    return child_ ? child_->status() : leveldb::Status::OK();
  }

 private:
  // Damage stays reported after the iterator moves on: a caller that seeks
  // elsewhere after an error must not get an answer with a block missing.
  void KeepError() {
    if (child_ && !child_->status().ok() && status_.ok()) status_ = child_->status();
  }
  void Clear() {
    KeepError();
    child_.reset();
  }
  void Enter(size_t i) {
    KeepError();
    index_ = i;
    child_.reset((*files_)[i].table->NewIterator(Verified()));
  }
  // Parses the current entry; false (and status_ set) if it is damaged.
  bool Parse(bool* is_value) {
    ParsedInternalKey p;
    const leveldb::Slice k = child_->key();
    if (!ParseInternalKey({k.data(), k.size()}, &p)) {
      status_ = leveldb::Status::Corruption((*files_)[index_].name, "malformed key");
      return false;
    }
    user_key_ = p.user_key;
    *is_value = p.is_value;
    return true;
  }
  void SkipForward() {
    while (true) {
      if (child_->Valid()) {
        bool is_value = false;
        if (!Parse(&is_value) || is_value) return;
        child_->Next();
        continue;
      }
      if (!child_->status().ok() || index_ + 1 >= files_->size()) return;
      Enter(index_ + 1);
      child_->SeekToFirst();
    }
  }
  void SkipBackward() {
    while (true) {
      if (child_->Valid()) {
        bool is_value = false;
        if (!Parse(&is_value) || is_value) return;
        child_->Prev();
        continue;
      }
      if (!child_->status().ok() || index_ == 0) return;
      Enter(index_ - 1);
      child_->SeekToLast();
    }
  }

  const std::vector<TableFiles::File>* files_;
  size_t index_ = 0;
  std::unique_ptr<leveldb::Iterator> child_;
  std::string_view user_key_;
  leveldb::Status status_;
};

absl::Status FromLevelDb(std::string_view dir, const leveldb::Status& s) {
  return CorruptTable(dir, s.ToString());
}

}  // namespace

TableFiles::~TableFiles() = default;

absl::Status TableFiles::OpenFile(const std::string& name, uint64_t bytes, leveldb::Cache* cache) {
  File f;
  f.name = name;
  leveldb::RandomAccessFile* raw = nullptr;
  leveldb::Status s = PreadEnv()->NewRandomAccessFile((fs::path(dir_) / name).string(), &raw);
  if (!s.ok()) return FromLevelDb(dir_, s);
  f.file.reset(raw);
  leveldb::Options opts;
  opts.comparator = InternalKeyOrder();
  opts.block_cache = cache;
  opts.paranoid_checks = true;  // verify the index and meta blocks too
  leveldb::Table* table = nullptr;
  s = leveldb::Table::Open(opts, f.file.get(), bytes, &table);
  if (!s.ok()) return FromLevelDb(dir_, s);
  f.table.reset(table);
  std::unique_ptr<leveldb::Iterator> it(table->NewIterator(Verified()));
  ParsedInternalKey p;
  it->SeekToFirst();
  if (!it->Valid()) {
    if (!it->status().ok()) return FromLevelDb(dir_, it->status());
    return absl::OkStatus();  // an empty file holds nothing to read
  }
  if (!ParseInternalKey({it->key().data(), it->key().size()}, &p)) {
    return CorruptTable(dir_, absl::StrCat(name, ": malformed key"));
  }
  f.smallest = std::string(p.user_key);
  it->SeekToLast();
  if (!it->Valid() || !ParseInternalKey({it->key().data(), it->key().size()}, &p)) {
    return CorruptTable(dir_, absl::StrCat(name, ": cannot read its last key ", it->status().ToString()));
  }
  f.largest = std::string(p.user_key);
  files_.push_back(std::move(f));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<TableFiles>> TableFiles::Open(const std::string& dir,
                                                             leveldb::Cache* cache) {
  std::unique_ptr<TableFiles> t(new TableFiles());
  t->dir_ = dir;
  absl::StatusOr<std::vector<TableFile>> listed = ReadFileList(dir);
  std::error_code ec;
  if (absl::IsNotFound(listed.status())) {
    if (!fs::exists(fs::path(dir) / "CURRENT", ec)) {
      return absl::InvalidArgumentError(absl::StrCat(dir, ": not a tracetable (no ", kFileListName, ")"));
    }
    // Version 4: LevelDB's folder, fully compacted. A non-empty log holds
    // writes that never reached a sorted file: not a table we wrote.
    t->legacy_ = true;
    std::vector<TableFile> found;
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
      const uint64_t bytes = e.file_size(ec);
      if (ec) break;
      if (e.path().extension() == ".log" && bytes > 0) {
        return CorruptTable(dir, absl::StrCat(e.path().filename().string(),
                                              " holds writes after the ingest (re-ingest the trace)"));
      }
      if (e.path().extension() == ".ldb") found.push_back({e.path().filename().string(), bytes});
    }
    if (ec) return absl::InternalError(absl::StrCat(dir, ": ", ec.message()));
    listed = std::move(found);
  }
  if (!listed.ok()) return listed.status();
  for (const TableFile& f : *listed) {
    if (absl::Status s = t->OpenFile(f.name, f.bytes, cache); !s.ok()) return s;
  }
  std::sort(t->files_.begin(), t->files_.end(),
            [](const File& a, const File& b) { return a.smallest < b.smallest; });
  for (size_t i = 1; i < t->files_.size(); ++i) {
    if (t->files_[i - 1].largest >= t->files_[i].smallest) {
      // Version-4 ingests left LevelDB's levels as they were, which only its
      // manifest orders; reading those is not worth a merge.
      if (t->legacy_) {
        return absl::FailedPreconditionError(absl::StrCat(
            dir, ": written by an older tracetable (format version 4) in files that overlap; "
                 "re-ingest the trace"));
      }
      return CorruptTable(dir, absl::StrCat("files ", t->files_[i - 1].name, " and ",
                                            t->files_[i].name, " overlap"));
    }
  }
  return t;
}

absl::Status TableFiles::Get(std::string_view key, std::string* value) const {
  RunIterator it(&files_);
  it.Seek({key.data(), key.size()});
  if (!it.status().ok()) return FromLevelDb(dir_, it.status());
  if (!it.Valid() || std::string_view(it.key().data(), it.key().size()) != key) {
    return absl::NotFoundError("no such key");
  }
  value->assign(it.value().data(), it.value().size());
  return absl::OkStatus();
}

std::unique_ptr<leveldb::Iterator> TableFiles::NewIterator() const {
  return std::make_unique<RunIterator>(&files_);
}

}  // namespace tracetable
