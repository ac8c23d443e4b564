#include "store/table.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "format/args_codec.h"
#include "format/levels.h"
#include "leveldb/cache.h"
#include "leveldb/db.h"
#include "leveldb/options.h"
#include "store/table_format.h"
#include "zlib.h"

namespace tracetable {
namespace fs = std::filesystem;

Table::~Table() {
  db_.reset();  // before the cache it uses
}

absl::StatusOr<std::unique_ptr<Table>> Table::Open(const std::string& path,
                                                   const Options& options) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    return absl::NotFoundError(absl::StrCat(path, ": no such table"));
  }
  if (!fs::is_directory(path, ec) || !fs::exists(fs::path(path) / "CURRENT", ec)) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": not a tracetable (a .tracetable is a LevelDB directory)"));
  }
  std::unique_ptr<Table> t(new Table());
  t->path_ = path;
  t->cache_.reset(leveldb::NewLRUCache(options.cache_bytes));
  leveldb::Options opts;
  opts.create_if_missing = false;
  opts.block_cache = t->cache_.get();
  opts.paranoid_checks = false;
  leveldb::DB* db = nullptr;
  leveldb::Status s = leveldb::DB::Open(opts, path, &db);
  if (!s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot open: ", s.ToString()));
  }
  t->db_.reset(db);
  if (absl::Status st = t->Load(); !st.ok()) return st;
  return t;
}

absl::Status Table::Load() {
  std::string value;
  leveldb::ReadOptions ro;
  if (!db_->Get(ro, kMetaKey, &value).ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path_, ": not a tracetable (no metadata record; an unfinished ingest?)"));
  }
  if (!meta_.ParseFromString(value)) {
    return absl::DataLossError(absl::StrCat(path_, ": metadata record is corrupt"));
  }
  identity_ = meta_.table_id();
  if (identity_.empty()) {
    const uLong crc = crc32(crc32(0, nullptr, 0), reinterpret_cast<const Bytef*>(value.data()),
                            static_cast<uInt>(value.size()));
    identity_ = absl::StrCat("m", absl::Hex(crc, absl::kZeroPad8), absl::Hex(value.size()));
  }
  if (meta_.format_version() != kFormatVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        path_, ": table has format version ", meta_.format_version(),
        "; this tracetable reads version ", kFormatVersion, " (re-ingest the trace)"));
  }
  if (!db_->Get(ro, kResourcesKey, &value).ok() || !resources_.ParseFromString(value)) {
    return absl::DataLossError(absl::StrCat(path_, ": resource table missing or corrupt"));
  }
  strings_.reserve(meta_.num_strings());
  for (uint32_t chunk = 0; chunk < meta_.num_string_chunks(); ++chunk) {
    proto::StringChunk c;
    if (!db_->Get(ro, StringChunkKey(chunk), &value).ok() || !c.ParseFromString(value)) {
      return absl::DataLossError(absl::StrCat(path_, ": string chunk ", chunk, " missing or corrupt"));
    }
    for (std::string& s : *c.mutable_strings()) strings_.push_back(std::move(s));
  }
  if (strings_.size() != meta_.num_strings()) {
    return absl::DataLossError(absl::StrCat(path_, ": string table has ", strings_.size(),
                                            " strings, metadata says ", meta_.num_strings()));
  }
  return absl::OkStatus();
}

absl::Status Table::ReadTiles(uint32_t track, TileSection section, int level,
                              int64_t from, int64_t to,
                              std::vector<TileRow>* rows, ReadStats* stats) const {
  if (to < from) return absl::OkStatus();
  auto offset = [this](int64_t t) {
    return t <= meta_.min_ts() ? uint64_t{0} : static_cast<uint64_t>(t - meta_.min_ts());
  };
  TileKey key{track, section, static_cast<uint8_t>(level), 0};
  const std::string first = EncodeTileKey(key);
  key.start = offset(from);
  const std::string begin = EncodeTileKey(key);
  key.start = offset(to);
  const std::string end = EncodeTileKey(key);
  leveldb::ReadOptions ro;
  std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(ro));
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
      return absl::DataLossError(absl::StrCat(path_, ": malformed tile key"));
    }
    leveldb::Slice v = it->value();
    if (stats) {
      ++stats->tiles;
      stats->bytes += v.size();
    }
    absl::Status s = DecodeTile(std::string_view(v.data(), v.size()),
                                TileStart(tk), rows);
    if (!s.ok()) {
      return absl::DataLossError(absl::StrCat(path_, ": tile of track ", track, " level ",
                                              level, " at ", tk.start, ": ", s.message()));
    }
  }
  if (!it->status().ok()) {
    return absl::DataLossError(absl::StrCat(path_, ": ", it->status().ToString()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> Table::Args(uint64_t event_id) const {
  std::string value;
  const uint64_t block = event_id >> kArgsBlockShift;
  const uint32_t slot = static_cast<uint32_t>(event_id & ((1u << kArgsBlockShift) - 1));
  leveldb::Status s = db_->Get(leveldb::ReadOptions(), ArgsBlockKey(block), &value);
  if (!s.ok() && !s.IsNotFound()) return absl::DataLossError(s.ToString());
  if (s.ok()) {
    absl::StatusOr<std::string> json = FindArgs(value, slot);
    if (json.ok()) return json;
    if (!absl::IsNotFound(json.status())) {
      return absl::DataLossError(absl::StrCat(path_, ": arguments record ", block, ": ",
                                              json.status().message()));
    }
  }
  return absl::NotFoundError(absl::StrCat("event ", event_id, " has no arguments"));
}

}  // namespace tracetable
