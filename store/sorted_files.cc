#include "store/sorted_files.h"

#include <filesystem>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "leveldb/db.h"
#include "leveldb/env.h"
#include "leveldb/iterator.h"
#include "leveldb/options.h"
#include "leveldb/table_builder.h"
#include "format/absl_compat.h"
#include "store/internal_key.h"

namespace tracetable {
namespace fs = std::filesystem;
namespace {

absl::Status Failed(const leveldb::Status& s, std::string_view what) {
  return absl::InternalError(absl::StrCat(Av(what), ": ", s.ToString()));
}

class SortedFileWriter {
 public:
  explicit SortedFileWriter(std::string dir) : dir_(std::move(dir)) {
    opts_.comparator = InternalKeyOrder();
    opts_.compression = leveldb::kSnappyCompression;
    opts_.block_size = 32 << 10;
  }

  absl::Status Add(const leveldb::Slice& key, const leveldb::Slice& value, uint64_t sequence) {
    if (!builder_) {
      path_ = (fs::path(dir_) / absl::StrFormat("%s%06d.ldb", kSortedFilePrefix, ++files_)).string();
      leveldb::WritableFile* f = nullptr;
      if (leveldb::Status s = leveldb::Env::Default()->NewWritableFile(path_, &f); !s.ok()) {
        return Failed(s, "cannot create a table file");
      }
      file_.reset(f);
      builder_ = std::make_unique<leveldb::TableBuilder>(opts_, file_.get());
    }
    builder_->Add(MakeInternalKey({key.data(), key.size()}, sequence), value);
    return absl::OkStatus();
  }

  uint64_t bytes() const { return builder_ ? builder_->FileSize() : 0; }

  absl::Status Close() {
    if (!builder_) return absl::OkStatus();
    leveldb::Status s = builder_->Finish();
    if (s.ok()) s = file_->Sync();
    if (s.ok()) s = file_->Close();
    builder_.reset();
    file_.reset();
    if (!s.ok()) return Failed(s, absl::StrCat("cannot write ", path_));
    return absl::OkStatus();
  }

  ~SortedFileWriter() {
    if (builder_) builder_->Abandon();
  }

 private:
  std::string dir_, path_;
  leveldb::Options opts_;
  int files_ = 0;
  std::unique_ptr<leveldb::WritableFile> file_;
  std::unique_ptr<leveldb::TableBuilder> builder_;
};

}  // namespace

absl::Status WriteSortedFiles(leveldb::DB* db, const std::string& dir, uint64_t max_file_bytes,
                              const std::function<absl::Status()>& tick) {
  leveldb::ReadOptions ro;
  ro.verify_checksums = true;
  ro.fill_cache = false;
  std::unique_ptr<leveldb::Iterator> it(db->NewIterator(ro));
  SortedFileWriter out(dir);
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (absl::Status s = tick(); !s.ok()) return s;
    // Sequence numbers only order versions of a key; each key has one here.
    if (absl::Status s = out.Add(it->key(), it->value(), 1); !s.ok()) return s;
    if (out.bytes() >= max_file_bytes) {
      if (absl::Status s = out.Close(); !s.ok()) return s;
    }
  }
  if (!it->status().ok()) return Failed(it->status(), "reading the build database");
  return out.Close();
}

}  // namespace tracetable
