#include "store/replace_check.h"

#include <filesystem>
#include <memory>

#include "absl/strings/str_cat.h"
#include "format/keys.h"
#include "format/tracetable.pb.h"
#include "store/file_list.h"
#include "store/table_files.h"

namespace tracetable {
namespace fs = std::filesystem;
namespace {

bool TableFileName(const std::string& name) {
  return name == kFileListName || name.ends_with(".ldb") || name == "CURRENT" || name == "LOCK" ||
         name == "LOG" || name == "LOG.old" || name.starts_with("MANIFEST-") || name.ends_with(".log");
}

absl::Status Refuse(const std::string& path, const std::string& why) {
  return absl::FailedPreconditionError(absl::StrCat(
      path, " ", why, "; --force only replaces a tracetable, so it was left as it is"));
}

}  // namespace

absl::Status CheckReplaceableUnread(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(path, ec);
  if (ec) return Refuse(path, absl::StrCat("cannot be inspected (", ec.message(), ")"));
  if (!fs::is_directory(st)) return Refuse(path, "is not a folder");
  for (const fs::directory_entry& e : fs::directory_iterator(path, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file(ec) || !TableFileName(name)) {
      return Refuse(path, absl::StrCat("holds ", name, ", which is not part of a tracetable"));
    }
  }
  if (ec) return Refuse(path, absl::StrCat("cannot be listed (", ec.message(), ")"));
  return absl::OkStatus();
}

absl::Status CheckReplaceable(const std::string& path) {
  if (absl::Status s = CheckReplaceableUnread(path); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<TableFiles>> files = TableFiles::Open(path, nullptr);
  if (!files.ok()) return Refuse(path, absl::StrCat("is not a readable tracetable (", files.status().message(), ")"));
  std::string value;
  proto::TableMeta meta;
  if (!(*files)->Get(kMetaKey, &value).ok() || !meta.ParseFromString(value) || meta.format_version() == 0) {
    return Refuse(path, "has no readable tracetable metadata");
  }
  return absl::OkStatus();
}

}  // namespace tracetable
