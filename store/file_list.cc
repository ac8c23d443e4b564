#include "store/file_list.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "store/corruption.h"

namespace tracetable {
namespace fs = std::filesystem;
namespace {

constexpr char kHeader[] = "tracetable files 1";
// A table never has this many files (64 MB each); a larger count is damage.
constexpr size_t kMaxFiles = 1 << 20;

absl::Status WriteAndSync(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return absl::InternalError(absl::StrCat("cannot create ", path, ": ", std::strerror(errno)));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t w = ::write(fd, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      const int err = errno;
      ::close(fd);
      return absl::InternalError(absl::StrCat("cannot write ", path, ": ", std::strerror(err)));
    }
    done += static_cast<size_t>(w);
  }
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced) return absl::InternalError(absl::StrCat("cannot sync ", path));
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteFileList(const std::string& dir) {
  std::vector<TableFile> files;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() != ".ldb") continue;
    files.push_back({e.path().filename().string(), e.file_size(ec)});
    if (ec) break;
  }
  if (ec) return absl::InternalError(absl::StrCat("cannot list ", dir, ": ", ec.message()));
  std::sort(files.begin(), files.end(),
            [](const TableFile& a, const TableFile& b) { return a.name < b.name; });
  std::string text = absl::StrCat(kHeader, "\n");
  for (const TableFile& f : files) absl::StrAppend(&text, f.name, " ", f.bytes, "\n");
  const std::string path = (fs::path(dir) / kFileListName).string();
  if (absl::Status s = WriteAndSync(path + ".tmp", text); !s.ok()) return s;
  fs::rename(path + ".tmp", path, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot rename ", path, ": ", ec.message()));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TableFile>> ReadFileList(const std::string& dir) {
  const fs::path path = fs::path(dir) / kFileListName;
  std::error_code ec;
  if (!fs::exists(path, ec)) return absl::NotFoundError(absl::StrCat(dir, ": no ", kFileListName));
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) return CorruptTable(dir, absl::StrCat("cannot read ", kFileListName));
  std::vector<std::string> lines = absl::StrSplit(text.str(), '\n');
  // Every line ends with '\n', so the last piece is empty.
  if (lines.size() < 2 || lines[0] != kHeader || !lines.back().empty()) {
    return CorruptTable(dir, absl::StrCat(kFileListName, " is not a file list"));
  }
  lines.pop_back();
  if (lines.size() - 1 > kMaxFiles) return CorruptTable(dir, absl::StrCat(kFileListName, " lists too many files"));
  std::vector<TableFile> files;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> parts = absl::StrSplit(lines[i], ' ');
    TableFile f;
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[1], &f.bytes) || parts[0].empty() ||
        parts[0].find('/') != std::string::npos || fs::path(parts[0]).extension() != ".ldb") {
      return CorruptTable(dir, absl::StrCat(kFileListName, " line ", i + 1, " is malformed"));
    }
    f.name = parts[0];
    const uint64_t actual = fs::file_size(fs::path(dir) / f.name, ec);
    if (ec) return CorruptTable(dir, absl::StrCat("file ", f.name, " is missing: ", ec.message()));
    if (actual != f.bytes) {
      return CorruptTable(dir, absl::StrCat("file ", f.name, " has ", actual, " bytes, ",
                                            kFileListName, " says ", f.bytes));
    }
    files.push_back(std::move(f));
  }
  return files;
}

}  // namespace tracetable
