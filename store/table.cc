#include "store/table.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "format/args_codec.h"
#include "format/levels.h"
#include "leveldb/cache.h"
#include "leveldb/iterator.h"
#include "store/corruption.h"
#include "store/fixed_coding.h"
#include "store/meta_check.h"
#include "store/run_manifest.h"
#include "store/run_shards.h"
#include "store/run_table.h"
#include "store/table_files.h"
#include "store/table_format.h"

namespace tracetable {
namespace fs = std::filesystem;

Table::~Table() {
  files_.reset();  // before the cache it uses
}

absl::StatusOr<std::unique_ptr<Table>> Table::Open(const std::string& path,
                                                   const Options& options) {
  if (IsRun(path)) return OpenRun(path, options);
  return OpenSingle(path, options);
}

absl::StatusOr<std::unique_ptr<Table>> Table::OpenSingle(const std::string& path,
                                                         const Options& options) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    return absl::NotFoundError(absl::StrCat(path, ": no such table"));
  }
  if (!fs::is_directory(path, ec)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a tracetable (a .tracetable is a folder)"));
  }
  std::unique_ptr<Table> t(new Table());
  t->path_ = path;
  // Before the files are opened: if the folder is replaced in between, the
  // table reads the new files but reports itself replaced (never the reverse).
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return absl::NotFoundError(absl::StrCat(path, ": no such table"));
  t->folder_dev_ = st.st_dev;
  t->folder_ino_ = st.st_ino;
  leveldb::Cache* cache = options.shared_cache;
  if (cache == nullptr) {
    t->cache_.reset(leveldb::NewLRUCache(options.cache_bytes));
    cache = t->cache_.get();
  }
  absl::StatusOr<std::unique_ptr<TableFiles>> files = TableFiles::Open(path, cache);
  if (!files.ok()) return files.status();
  t->files_ = std::move(*files);
  if (absl::Status st = t->Load(options.load_strings); !st.ok()) return st;
  return t;
}

absl::Status Table::CheckStillOnDisk() const {
  struct stat st;
  if (::stat(path_.c_str(), &st) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(path_, ": the table was removed since it was opened"));
  }
  if (st.st_dev != folder_dev_ || st.st_ino != folder_ino_) {
    return absl::FailedPreconditionError(
        absl::StrCat(path_, ": the table was replaced since it was opened (re-ingested?); reopen it"));
  }
  if (run_) return run_->CheckManifest();
  return absl::OkStatus();
}

absl::Status Table::Get(std::string_view key, std::string* value) const {
  if (run_) return run_->Get(key, value);
  return files_->Get(key, value);
}

std::unique_ptr<leveldb::Iterator> Table::NewIterator() const {
  if (run_) {
    return std::unique_ptr<leveldb::Iterator>(leveldb::NewErrorIterator(leveldb::Status::NotSupported(
        "a run is read through its shards, not as one sorted run of records")));
  }
  return files_->NewIterator();
}

absl::Status Table::Load(bool load_strings) {
  std::string value;
  if (absl::Status s = Get(kMetaKey, &value); !s.ok()) {
    if (!absl::IsNotFound(s)) return s;
    return absl::InvalidArgumentError(absl::StrCat(
        path_, ": not a tracetable (no metadata record; an unfinished ingest?)"));
  }
  if (!meta_.ParseFromString(value)) return CorruptTable(path_, "metadata record does not parse");
  identity_ = meta_.table_id();
  if (identity_.empty()) {
    const uint32_t crc = Crc32(value);
    identity_ = absl::StrCat("m", absl::Hex(crc, absl::kZeroPad8), absl::Hex(value.size()));
  }
  // Version 5 changed only how the files are listed (store/file_list.h), so
  // version-4 tables read the same; version 6 only how argument blocks and
  // memory segments hold integers, and their decoders read both forms;
  // version 7 only that flow ids may be numbers, which no earlier table has.
  const uint32_t version = meta_.format_version();
  const bool known = (version >= kOldestSortedFilesVersion && version <= kFormatVersion) ||
                     (version == 4 && files_->legacy());
  if (!known) {
    return absl::FailedPreconditionError(absl::StrCat(
        path_, ": table has format version ", version, "; this tracetable reads versions 4 to ",
        kFormatVersion, " (re-ingest the trace)"));
  }
  if (absl::Status s = CheckTableMeta(path_, meta_); !s.ok()) return s;
  if (absl::Status s = Get(kResourcesKey, &value); !s.ok() && !absl::IsNotFound(s)) return s;
  else if (!s.ok() || !resources_.ParseFromString(value)) {
    return CorruptTable(path_, "resource table missing or does not parse");
  }
  if (absl::Status s = CheckResources(path_, meta_, resources_); !s.ok()) return s;
  if (!load_strings) return absl::OkStatus();
  // Chunks are full but the last, so the count is checked chunk by chunk
  // rather than trusted for sizing memory.
  for (uint32_t chunk = 0; chunk < meta_.num_string_chunks(); ++chunk) {
    proto::StringChunk c;
    if (absl::Status s = Get(StringChunkKey(chunk), &value); !s.ok() && !absl::IsNotFound(s)) return s;
    else if (!s.ok() || !c.ParseFromString(value)) {
      return CorruptTable(path_, absl::StrCat("string chunk ", chunk, " missing or does not parse"));
    }
    const uint64_t expect = std::min<uint64_t>(kStringsPerChunk, meta_.num_strings() - strings_.size());
    if (static_cast<uint64_t>(c.strings_size()) != expect) {
      return CorruptTable(path_, absl::StrCat("string chunk ", chunk, " has ", c.strings_size(),
                                              " strings, metadata says ", expect));
    }
    for (std::string& s : *c.mutable_strings()) strings_.push_back(std::move(s));
  }
  return absl::OkStatus();
}

absl::Status Table::ReadTiles(uint32_t track, TileSection section, int level,
                              int64_t from, int64_t to,
                              std::vector<TileRow>* rows, ReadStats* stats) const {
  if (to < from) return absl::OkStatus();
  if (run_) return run_->ReadTiles(track, section, level, from, to, rows, stats);
  auto offset = [this](int64_t t) {
    return t <= meta_.min_ts() ? uint64_t{0} : static_cast<uint64_t>(t - meta_.min_ts());
  };
  TileKey key{track, section, static_cast<uint8_t>(level), 0};
  const std::string first = EncodeTileKey(key);
  key.start = offset(from);
  const std::string begin = EncodeTileKey(key);
  key.start = offset(to);
  const std::string end = EncodeTileKey(key);
  std::unique_ptr<leveldb::Iterator> it = NewIterator();
  // The tile before the first one starting at or after `from` may hold rows
  // in range too.
  it->Seek(begin);
  if (it->Valid()) {
    it->Prev();
  } else {
    it->SeekToLast();
  }
  if (!it->Valid() || std::string_view(it->key().data(), it->key().size()) < first) it->Seek(first);
  for (; it->Valid(); it->Next()) {
    leveldb::Slice k = it->key();
    if (std::string_view(k.data(), k.size()) > end) break;
    TileKey tk;
    if (!DecodeTileKey(std::string_view(k.data(), k.size()), &tk)) {
      return CorruptTable(path_, "malformed tile key");
    }
    leveldb::Slice v = it->value();
    if (stats) {
      ++stats->tiles;
      stats->bytes += v.size();
    }
    absl::Status s = DecodeTile(std::string_view(v.data(), v.size()),
                                TileStart(tk), rows);
    if (!s.ok()) {
      return CorruptTable(path_, absl::StrCat("tile of track ", track, " level ", level, " at ",
                                              tk.start, ": ", s.message()));
    }
  }
  if (!it->status().ok()) {
    return CorruptTable(path_, it->status().ToString());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> Table::Args(uint64_t event_id) const {
  if (run_) return run_->Args(event_id);
  std::string value;
  const uint64_t block = event_id >> kArgsBlockShift;
  const uint32_t slot = static_cast<uint32_t>(event_id & ((1u << kArgsBlockShift) - 1));
  absl::Status s = Get(ArgsBlockKey(block), &value);
  if (!s.ok() && !absl::IsNotFound(s)) return s;
  if (s.ok()) {
    absl::StatusOr<std::string> json = FindArgs(value, slot);
    if (json.ok()) return json;
    if (!absl::IsNotFound(json.status())) {
      return CorruptTable(path_, absl::StrCat("arguments record ", block, ": ",
                                              json.status().message()));
    }
  }
  return absl::NotFoundError(absl::StrCat("event ", event_id, " has no arguments"));
}

absl::StatusOr<ThreadTimeEntry> Table::ThreadTime(uint64_t event_id) const {
  if (run_) return run_->ThreadTime(event_id);
  std::string value;
  const uint64_t block = event_id >> kArgsBlockShift;
  const uint32_t slot = static_cast<uint32_t>(event_id & ((1u << kArgsBlockShift) - 1));
  absl::Status s = Get(ThreadTimeBlockKey(block), &value);
  if (!s.ok() && !absl::IsNotFound(s)) return s;
  if (s.ok()) {
    absl::StatusOr<ThreadTimeEntry> e = FindThreadTime(value, slot);
    if (e.ok()) return e;
    if (!absl::IsNotFound(e.status())) {
      return CorruptTable(path_, absl::StrCat("thread time record ", block, ": ", e.status().message()));
    }
  }
  return absl::NotFoundError(absl::StrCat("event ", event_id, " has no thread time"));
}

}  // namespace tracetable
