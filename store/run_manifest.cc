#include "store/run_manifest.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "format/absl_compat.h"
#include "format/tracetable.pb.h"
#include "store/fixed_coding.h"
#include "store/replace_check.h"
#include "store/run_view.h"

namespace tracetable {
namespace fs = std::filesystem;
namespace {

// RUN = magic, u32 LE payload length, u32 LE CRC-32 (zlib) of the payload,
// then the RunManifest protobuf: nothing else.
constexpr std::string_view kMagic = "tracetable run\n";
constexpr size_t kHeaderBytes = kMagic.size() + 8;

absl::Status Corrupt(std::string_view why) {
  return absl::DataLossError(absl::StrCat("corrupt run manifest: ", Av(why)));
}

absl::Status Errno(std::string_view what, const std::string& path) {
  return absl::InternalError(absl::StrCat(Av(what), " ", path, ": ", std::strerror(errno)));
}




std::string NewRunId() {
  std::random_device rd;
  std::string id;
  for (int i = 0; i < 4; ++i) absl::StrAppend(&id, absl::Hex(rd(), absl::kZeroPad8));
  return id;
}

proto::RunShard ToProto(const RunShardInfo& s) {
  proto::RunShard p;
  p.set_host(s.host);
  p.set_dir(s.dir);
  p.set_table_id(s.table_id);
  p.set_min_ts(s.min_ts);
  p.set_max_end(s.max_end);
  p.set_num_events(s.num_events);
  p.set_event_ids(s.event_ids);
  p.set_num_tracks(s.num_tracks);
  p.set_num_processes(s.num_processes);
  p.set_num_levels(s.num_levels);
  p.set_input_name(s.input_name);
  p.set_input_path(s.input_path);
  p.set_input_bytes(s.input_bytes);
  p.set_clock_shift_ns(s.clock_shift_ns);
  return p;
}

RunShardInfo FromProto(const proto::RunShard& p) {
  RunShardInfo s;
  s.host = p.host();
  s.dir = p.dir();
  s.table_id = p.table_id();
  s.min_ts = p.min_ts();
  s.max_end = p.max_end();
  s.num_events = p.num_events();
  s.event_ids = p.event_ids();
  s.num_tracks = p.num_tracks();
  s.num_processes = p.num_processes();
  s.num_levels = p.num_levels();
  s.input_name = p.input_name();
  s.input_path = p.input_path();
  s.input_bytes = p.input_bytes();
  s.clock_shift_ns = p.clock_shift_ns();
  return s;
}

// A shard dir must stay inside the run's shards/ folder, whatever RUN says.
bool SafeShardDir(const std::string& dir) {
  const std::string prefix = absl::StrCat(kRunShardsDir, "/");
  if (!absl::StartsWith(dir, prefix) || dir.size() == prefix.size()) return false;
  const std::string_view rest = std::string_view(dir).substr(prefix.size());
  return rest.find('/') == std::string_view::npos && rest != "." && rest != "..";
}

absl::Status CheckConsistent(const RunManifest& m) {
  absl::flat_hash_set<std::string> hosts;
  absl::flat_hash_set<std::string> dirs;
  for (const RunShardInfo& s : m.shards) {
    if (s.host.empty()) return Corrupt("a shard without a host");
    if (!hosts.insert(s.host).second) return Corrupt(absl::StrCat("host ", s.host, " listed twice"));
    if (!SafeShardDir(s.dir)) return Corrupt(absl::StrCat("host ", s.host, ": bad shard folder '", s.dir, "'"));
    if (!dirs.insert(s.dir).second) return Corrupt(absl::StrCat("shard folder ", s.dir, " listed twice"));
    if (s.min_ts > s.max_end && s.num_events > 0) {
      return Corrupt(absl::StrCat("host ", s.host, ": span ends before it starts"));
    }
  }
  return absl::OkStatus();
}

absl::Status WriteFileSynced(const std::string& path, std::string_view bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("cannot create", path);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      absl::Status s = Errno("cannot write", path);
      ::close(fd);
      return s;
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    absl::Status s = Errno("cannot sync", path);
    ::close(fd);
    return s;
  }
  if (::close(fd) != 0) return Errno("cannot close", path);
  return absl::OkStatus();
}

absl::Status SyncDir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno("cannot open", dir);
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return Errno("cannot sync", dir);
  return absl::OkStatus();
}

// Holds an exclusive flock on RUN.lock for its lifetime.
class RunLock {
 public:
  ~RunLock() {
    if (fd_ >= 0) ::close(fd_);  // closing drops the lock
  }
  absl::Status Acquire(const std::string& run_path) {
    const std::string path = (fs::path(run_path) / kRunLockName).string();
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) return Errno("cannot open", path);
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) return Errno("cannot lock", path);
    }
    return absl::OkStatus();
  }

 private:
  int fd_ = -1;
};

// Under the lock no other writer is between write and rename, so any
// RUN.tmp-* is what a killed writer left.
void RemoveDeadTemps(const std::string& run_path) {
  std::error_code ec;
  const std::string prefix = absl::StrCat(kRunFileName, ".tmp-");
  for (const fs::directory_entry& e : fs::directory_iterator(run_path, ec)) {
    if (absl::StartsWith(e.path().filename().string(), prefix)) fs::remove(e.path(), ec);
  }
}

// Writes RUN.view for `m` (store/run_view.h), under the run's lock. It is a
// cache of the shards' heads: when it cannot be written the old one stays,
// and readers use it only where it still matches, so this never fails the
// manifest update.
void WriteRunView(const std::string& run_path, const RunManifest& m) {
  absl::StatusOr<RunView> old = ReadRunView(run_path);
  RunView* reuse = old.ok() && old->run_id == m.run_id ? &*old : nullptr;
  const std::string bytes = EncodeRunView(MakeRunView(run_path, m, reuse));
  const std::string final_path = (fs::path(run_path) / kRunViewFileName).string();
  // Named RUN.tmp-*: RemoveDeadTemps clears it if this process dies.
  const std::string temp = absl::StrCat(run_path, "/", kRunFileName, ".tmp-", ::getpid(), ".view");
  std::error_code ec;
  if (!WriteFileSynced(temp, bytes).ok() || ::rename(temp.c_str(), final_path.c_str()) != 0) fs::remove(temp, ec);
}

}  // namespace

const RunShardInfo* RunManifest::Find(const std::string& host) const {
  for (const RunShardInfo& s : shards) {
    if (s.host == host) return &s;
  }
  return nullptr;
}

void RunManifest::Put(RunShardInfo shard) {
  for (RunShardInfo& s : shards) {
    if (s.host == shard.host) {
      s = std::move(shard);
      SortShards(&shards);
      return;
    }
  }
  shards.push_back(std::move(shard));
  SortShards(&shards);
}

void SortShards(std::vector<RunShardInfo>* shards) {
  std::stable_sort(shards->begin(), shards->end(), [](const RunShardInfo& a, const RunShardInfo& b) {
    return std::tie(a.input_name, a.host) < std::tie(b.input_name, b.host);
  });
}

std::string EscapeHostName(const std::string& host) {
  std::string out;
  for (size_t i = 0; i < host.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(host[i]);
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '_' || c == '-' || (c == '.' && i > 0);
    if (plain) {
      out.push_back(static_cast<char>(c));
    } else {
      absl::StrAppend(&out, "%", absl::Hex(c, absl::kZeroPad2));
    }
  }
  return out;
}

std::string ShardDirFor(const std::string& host) {
  return absl::StrCat(kRunShardsDir, "/", EscapeHostName(host), ".tracetable");
}

bool IsRun(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) && fs::exists(fs::path(path) / kRunFileName, ec);
}

std::string EncodeRunManifest(const RunManifest& m) {
  proto::RunManifest p;
  p.set_format_version(m.format_version);
  p.set_origin_ns(m.origin_ns);
  p.set_run_id(m.run_id);
  p.set_generation(m.generation);
  for (const RunShardInfo& s : m.shards) *p.add_shards() = ToProto(s);
  const std::string payload = p.SerializeAsString();
  std::string out(kMagic.data(), kMagic.size());
  PutFixed32(&out, static_cast<uint32_t>(payload.size()));
  PutFixed32(&out, Crc32(payload));
  out += payload;
  return out;
}

absl::StatusOr<RunManifest> DecodeRunManifest(std::string_view bytes) {
  if (bytes.size() < kHeaderBytes || bytes.substr(0, kMagic.size()) != kMagic) {
    return Corrupt("not a run manifest (bad magic)");
  }
  const uint32_t size = GetFixed32(bytes.substr(kMagic.size()));
  const uint32_t crc = GetFixed32(bytes.substr(kMagic.size() + 4));
  const std::string_view payload = bytes.substr(kHeaderBytes);
  if (payload.size() != size) {
    return Corrupt(absl::StrCat("payload is ", payload.size(), " bytes, header says ", size));
  }
  if (Crc32(payload) != crc) return Corrupt("checksum mismatch");
  proto::RunManifest p;
  if (!p.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    return Corrupt("payload does not parse");
  }
  if (p.format_version() != kRunFormatVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "run manifest format version ", p.format_version(), " is not supported (this build reads ",
        kRunFormatVersion, ")"));
  }
  RunManifest m;
  m.format_version = p.format_version();
  m.origin_ns = p.origin_ns();
  m.run_id = p.run_id();
  m.generation = p.generation();
  for (const proto::RunShard& s : p.shards()) m.shards.push_back(FromProto(s));
  if (absl::Status s = CheckConsistent(m); !s.ok()) return s;
  return m;
}

absl::StatusOr<RunManifest> ReadRunManifest(const std::string& run_path) {
  const std::string path = (fs::path(run_path) / kRunFileName).string();
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec;
    if (!fs::exists(path, ec)) return absl::NotFoundError(absl::StrCat(run_path, ": not a run (no RUN file)"));
    return absl::InternalError(absl::StrCat("cannot read ", path));
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) return absl::InternalError(absl::StrCat("cannot read ", path));
  absl::StatusOr<RunManifest> m = DecodeRunManifest(bytes.str());
  if (!m.ok()) return absl::Status(m.status().code(), absl::StrCat(run_path, ": ", m.status().message()));
  return m;
}

absl::Status CheckRunReplaceable(const std::string& path) {
  auto refuse = [&](std::string_view why) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": not replaced: ", Av(why), " (--force replaces only a run or a table)"));
  };
  if (!IsRun(path)) return refuse("not a run");
  if (absl::StatusOr<RunManifest> m = ReadRunManifest(path); !m.ok()) return refuse(Sv(m.status().message()));
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(path, ec)) {
    const std::string name = e.path().filename().string();
    if (name == kRunFileName || name == kRunLockName || name == kRunViewFileName) continue;
    if (name != kRunShardsDir || !e.is_directory()) return refuse(absl::StrCat("it holds ", name));
  }
  for (const fs::directory_entry& e : fs::directory_iterator(fs::path(path) / kRunShardsDir, ec)) {
    const std::string name = e.path().filename().string();
    if (absl::StrContains(name, ".tracetable.tmp-")) continue;  // a shard ingest's temp folder
    if (!absl::EndsWith(name, ".tracetable")) return refuse(absl::StrCat("it holds shards/", name));
    if (absl::Status s = CheckReplaceable(e.path().string()); !s.ok()) return refuse(Sv(s.message()));
  }
  if (ec) return refuse(ec.message());
  return absl::OkStatus();
}

absl::Status UpdateRunManifest(const std::string& run_path,
                               absl::FunctionRef<absl::Status(RunManifest&)> edit) {
  std::error_code ec;
  fs::create_directories(fs::path(run_path) / kRunShardsDir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create run ", run_path, ": ", ec.message()));
  RunLock lock;
  if (absl::Status s = lock.Acquire(run_path); !s.ok()) return s;
  RemoveDeadTemps(run_path);
  RunManifest m;
  if (absl::StatusOr<RunManifest> old = ReadRunManifest(run_path); old.ok()) {
    m = *std::move(old);
  } else if (absl::IsNotFound(old.status())) {
    m.run_id = NewRunId();
  } else {
    return old.status();  // never overwrite a manifest we cannot read
  }
  if (absl::Status s = edit(m); !s.ok()) return s;
  m.format_version = kRunFormatVersion;
  ++m.generation;
  SortShards(&m.shards);
  if (absl::Status s = CheckConsistent(m); !s.ok()) {
    return absl::InternalError(absl::StrCat("refusing to write a bad run manifest: ", s.message()));
  }
  const std::string final_path = (fs::path(run_path) / kRunFileName).string();
  const std::string temp = absl::StrCat(final_path, ".tmp-", ::getpid());
  if (absl::Status s = WriteFileSynced(temp, EncodeRunManifest(m)); !s.ok()) {
    fs::remove(temp, ec);
    return s;
  }
  if (::rename(temp.c_str(), final_path.c_str()) != 0) {
    absl::Status s = Errno("cannot rename into place", final_path);
    fs::remove(temp, ec);
    return s;
  }
  WriteRunView(run_path, m);
  return SyncDir(run_path);
}

}  // namespace tracetable
