// ReadXSpace: two passes over the file.
//
//  1. Scan (space_file.h): walk the XSpace's top-level fields without
//     decoding planes. Errors, warnings and hostnames are read here because
//     protobuf writers put them after the planes (field order), yet the host
//     name must be known before BeginInput and all plane ids before any pid
//     is chosen. Truncation and most corruption fail here, before anything
//     reaches the sink.
//  2. Emit: read and decode one XPlane at a time (wire_reader.h, so peak
//     memory is about one plane) and hand its events to the sink
//     (plane_emitter.h).
#include "ingest/xspace/reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "format/absl_compat.h"
#include "ingest/xspace/plane_emitter.h"
#include "ingest/xspace/space_file.h"
#include "ingest/xspace/stat_json.h"
#include "ingest/xspace/wire_reader.h"

namespace tracetable {
namespace {

using xspace_internal::DecodeError;
using xspace_internal::PlaneDecoder;
using xspace_internal::PlaneEmitter;
using xspace_internal::SpaceIndex;

constexpr std::string_view kFileSuffix = ".xplane.pb";

class ScopedFd {
 public:
  explicit ScopedFd(int fd) : fd_(fd) {}
  ~ScopedFd() {
    if (fd_ >= 0) close(fd_);
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string DefaultHost(const std::string& path,
                        const std::vector<std::string>& hostnames) {
  if (!hostnames.empty() && !hostnames[0].empty()) return hostnames[0];
  std::string_view base = path;
  if (const size_t slash = base.rfind('/'); slash != std::string_view::npos) {
    base.remove_prefix(slash + 1);
  }
  if (absl::EndsWith(Av(base), Av(kFileSuffix))) {
    base.remove_suffix(kFileSuffix.size());
  }
  return std::string(base);
}

std::string JsonStringArray(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out.push_back(',');
    AppendJsonString(&out, items[i]);
  }
  out.push_back(']');
  return out;
}

void ReportSpaceFields(const SpaceIndex& index, EventSink* sink) {
  for (const std::string& e : index.errors) {
    sink->Warn(absl::StrCat("xspace error: ", e));
  }
  for (const std::string& w : index.warnings) {
    sink->Warn(absl::StrCat("xspace warning: ", w));
  }
  if (index.unknown_fields > 0) {
    sink->Warn(absl::StrCat("xspace: skipped ", index.unknown_fields,
                            " unknown top-level fields"));
  }
  if (!index.hostnames.empty()) {
    sink->SetInputField("hostnames", JsonStringArray(index.hostnames));
  }
}

absl::StatusOr<uint64_t> OpenRegularFile(const std::string& path, int* fd) {
  *fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (*fd < 0) {
    const std::string why = absl::StrCat(path, ": ", std::strerror(errno));
    return errno == ENOENT ? absl::NotFoundError(why)
                           : absl::InvalidArgumentError(why);
  }
  struct stat st;
  if (fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a regular file"));
  }
  if (st.st_size == 0) return DecodeError(path, 0, "empty file");
  return static_cast<uint64_t>(st.st_size);
}

// A plane's bytes and views, kept by each reader thread from file to file:
// fresh multi-MiB buffers per file are memory the kernel must fault in and
// zero again (~14% of the reader's time). Above kKeepBytes they are freed
// after the file, so one huge profile does not pin its memory.
class PlaneScratch {
 public:
  static constexpr size_t kKeepBytes = size_t{64} << 20;
  void Trim() {
    const size_t held = bytes.capacity() +
                        plane.events.capacity() * sizeof(xspace_wire::EventView) +
                        plane.stats.capacity() * sizeof(xspace_wire::StatView);
    if (held > kKeepBytes) {
      bytes = std::string();
      plane = xspace_wire::PlaneView();
    }
  }

  std::string bytes;
  xspace_wire::PlaneView plane;
};

}  // namespace

absl::Status ReadXSpace(
    const std::string& path, std::string_view host, EventSink* sink,
    const std::function<void(uint64_t done, uint64_t total)>& progress) {
  int raw_fd = -1;
  absl::StatusOr<uint64_t> size = OpenRegularFile(path, &raw_fd);
  ScopedFd fd(raw_fd);
  if (!size.ok()) return size.status();
  absl::StatusOr<SpaceIndex> index =
      xspace_internal::ScanSpace(fd.get(), *size, path);
  if (!index.ok()) return index.status();

  sink->BeginInput(path, host.empty() ? DefaultHost(path, index->hostnames)
                                      : std::string(host));
  ReportSpaceFields(*index, sink);
  if (progress) progress(0, *size);

  std::vector<int64_t> plane_ids;
  for (const auto& ref : index->planes) plane_ids.push_back(ref.id);
  const std::vector<std::string> pids = xspace_internal::PlanePids(plane_ids);
  std::string plane_stats;  // {"<plane name>":{...},...}
  thread_local PlaneScratch scratch;
  struct TrimAtExit {
    PlaneScratch* s;
    ~TrimAtExit() { s->Trim(); }
  } trim{&scratch};
  PlaneDecoder decoder(fd.get(), path, &scratch.bytes);
  xspace_wire::PlaneView& plane = scratch.plane;
  for (size_t i = 0; i < index->planes.size(); ++i) {
    const xspace_internal::PlaneRef& ref = index->planes[i];
    if (absl::Status s = decoder.Decode(ref, i, &plane); !s.ok()) return s;

    PlaneEmitter emitter(sink, plane, pids[i]);
    // Within a plane, progress moves with the share of its events emitted.
    std::function<void(uint64_t, uint64_t)> line_done;
    if (progress) {
      line_done = [&](uint64_t done, uint64_t total) {
        if (total > 0) progress(ref.offset + ref.length * done / total, *size);
      };
    }
    const int64_t sort_index =
        xspace_internal::PlaneSortIndex(plane.name, i);
    if (absl::Status s = emitter.Emit(sort_index, line_done); !s.ok()) {
      return s;
    }
    if (std::string stats = emitter.PlaneStatsJson(); !stats.empty()) {
      plane_stats.append(plane_stats.empty() ? "{" : ",");
      AppendJsonString(&plane_stats, plane.name);
      plane_stats.append(":").append(stats);
    }
    if (progress) progress(ref.offset + ref.length, *size);
  }
  if (!plane_stats.empty()) {
    sink->SetInputField("xspace_plane_stats", plane_stats + "}");
  }
  if (progress) progress(*size, *size);
  return absl::OkStatus();
}

}  // namespace tracetable
