// XSpace reader. Two passes over the file, both through a FileInputStream:
//
//  1. Scan: walk the XSpace's top-level fields without decoding planes. Each
//     plane is only skimmed for its id and name (its lines are skipped, which
//     seeks). Errors, warnings and hostnames are read here because protobuf
//     writers put them after the planes (field order), yet the host name must
//     be known before BeginInput and plane ids before any pid is chosen.
//  2. Emit: seek to each plane, decode just that XPlane (in its own arena, so
//     peak memory is about one plane) and hand its events to the sink.
//
// Every structural check happens in the scan, so a corrupt file fails with a
// precise byte offset before anything reaches the sink, except corruption
// inside a plane's nested messages, which the plane decode reports with the
// plane's offset.
#include "ingest/xspace/reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/arena.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "google/protobuf/wire_format_lite.h"
#include "ingest/xspace/stat_json.h"
#include "ingest/xspace/wire_check.h"
#include "ingest/xspace/xplane.pb.h"

namespace tracetable {
namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;
using google::protobuf::io::FileInputStream;
using xspace::XEvent;
using xspace::XEventMetadata;
using xspace::XLine;
using xspace::XPlane;
using xspace::XStat;

constexpr int kReadBlockBytes = 1 << 16;
// CodedInputStream counts bytes in an int; leave room for a field's tag and
// length in front of its payload.
constexpr uint64_t kMaxFieldBytes = INT_MAX - 32;
constexpr std::string_view kCountersLine = "_counters_";
constexpr std::string_view kFileSuffix = ".xplane.pb";

// Debian's abseil has its own string_view type, not std::string_view.
absl::string_view Av(std::string_view s) { return {s.data(), s.size()}; }

// ---------------------------------------------------------------------------
// File layer
// ---------------------------------------------------------------------------

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

// Where one XPlane's bytes are, plus what the scan learnt from its header.
struct PlaneRef {
  uint64_t offset = 0;  // first byte of the XPlane message
  uint64_t length = 0;
  int64_t id = 0;
  std::string name;
};

// Everything of the XSpace except the plane contents.
struct SpaceIndex {
  std::vector<PlaneRef> planes;
  std::vector<std::string> errors;
  std::vector<std::string> warnings;
  std::vector<std::string> hostnames;
  uint64_t unknown_fields = 0;
};

absl::Status DecodeError(const std::string& path, uint64_t offset,
                         std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": not a valid XSpace (.xplane.pb): ", Av(what),
                   " at byte offset ", offset));
}

// "field 1 (planes)": XSpace's field names make errors readable.
std::string SpaceField(int field) {
  static constexpr const char* kNames[] = {"", "planes", "errors", "warnings",
                                           "hostnames"};
  return absl::StrCat("XSpace field ", field, " (", kNames[field], ")");
}

constexpr uint32_t Tag(int field, WireFormatLite::WireType wire) {
  return (static_cast<uint32_t>(field) << 3) | wire;
}

// Reads the XPlane id and name from a plane's top-level fields and skips the
// rest (lines and metadata maps are the bulk; Skip seeks over them). `base`
// is the file offset where `coded` started.
absl::Status SkimPlane(CodedInputStream& coded, uint64_t base,
                       const std::string& path, PlaneRef* ref) {
  const auto limit = coded.PushLimit(static_cast<int>(ref->length));
  while (coded.BytesUntilLimit() > 0) {
    const uint64_t tag_at = base + coded.CurrentPosition();
    const uint32_t tag = coded.ReadTag();
    if (tag == 0 || WireFormatLite::GetTagFieldNumber(tag) == 0) {
      return DecodeError(path, tag_at, "invalid field tag inside an XPlane");
    }
    bool ok;
    if (tag == Tag(1, WireFormatLite::WIRETYPE_VARINT)) {
      uint64_t id;
      ok = coded.ReadVarint64(&id);
      ref->id = static_cast<int64_t>(id);
    } else if (tag == Tag(2, WireFormatLite::WIRETYPE_LENGTH_DELIMITED)) {
      uint32_t size;
      ok = coded.ReadVarint32(&size) && size <= INT_MAX &&
           coded.ReadString(&ref->name, static_cast<int>(size));
    } else {
      ok = WireFormatLite::SkipField(&coded, tag);
    }
    if (!ok) {
      return DecodeError(
          path, tag_at,
          absl::StrCat("corrupt or truncated field ",
                       WireFormatLite::GetTagFieldNumber(tag),
                       " inside an XPlane"));
    }
  }
  coded.PopLimit(limit);
  return absl::OkStatus();
}

// Handles one length-delimited top-level field (1..4) whose payload starts at
// `start`.
absl::Status ScanKnownField(CodedInputStream& coded, int field,
                            uint64_t field_start, uint64_t start,
                            uint64_t length, const std::string& path,
                            SpaceIndex* index) {
  if (field == 1) {
    PlaneRef ref;
    ref.offset = start;
    ref.length = length;
    if (absl::Status s = SkimPlane(coded, field_start, path, &ref); !s.ok()) {
      return s;
    }
    index->planes.push_back(std::move(ref));
    return absl::OkStatus();
  }
  std::string text;
  if (!coded.ReadString(&text, static_cast<int>(length))) {
    return DecodeError(path, start, "truncated string");
  }
  // proto3 strings must be UTF-8; random bytes rarely are.
  if (!xspace_json::IsValidUtf8(text)) {
    return DecodeError(path, start, "string field is not UTF-8");
  }
  std::vector<std::string>* list = field == 2   ? &index->errors
                                   : field == 3 ? &index->warnings
                                                : &index->hostnames;
  list->push_back(std::move(text));
  return absl::OkStatus();
}

// Reads one top-level field starting at `field_start` (the stream's
// position). A fresh CodedInputStream per field keeps its int byte counter
// from overflowing on files over 2 GiB.
absl::Status ScanField(FileInputStream& stream, uint64_t file_size,
                       const std::string& path, SpaceIndex* index,
                       bool* recognized) {
  const uint64_t field_start = stream.ByteCount();
  CodedInputStream coded(&stream);
  coded.SetTotalBytesLimit(INT_MAX);
  const auto at = [&] { return field_start + coded.CurrentPosition(); };

  const uint32_t tag = coded.ReadTag();
  const int field = WireFormatLite::GetTagFieldNumber(tag);
  const int wire = WireFormatLite::GetTagWireType(tag);
  if (tag == 0 || field == 0) {
    return DecodeError(path, field_start, "invalid or truncated field tag");
  }
  if (field > 4) {
    // Unknown fields are legal protobuf, but groups and wire types 6/7 are
    // what non-protobuf bytes (JSON's '{', text) decode to.
    const bool plain = wire == WireFormatLite::WIRETYPE_VARINT ||
                       wire == WireFormatLite::WIRETYPE_FIXED64 ||
                       wire == WireFormatLite::WIRETYPE_LENGTH_DELIMITED ||
                       wire == WireFormatLite::WIRETYPE_FIXED32;
    if (!plain) {
      return DecodeError(path, field_start,
                         absl::StrCat("unexpected wire type ", wire,
                                      " for field ", field));
    }
    if (!WireFormatLite::SkipField(&coded, tag)) {
      return DecodeError(path, field_start,
                         absl::StrCat("truncated unknown field ", field));
    }
    ++index->unknown_fields;
    return absl::OkStatus();
  }
  if (wire != WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
    return DecodeError(path, field_start,
                       absl::StrCat(SpaceField(field), " has wire type ", wire,
                                    ", expected 2 (length-delimited)"));
  }
  const uint64_t length_at = at();
  uint64_t length;
  if (!coded.ReadVarint64(&length)) {
    return DecodeError(path, length_at, "truncated or invalid field length");
  }
  const uint64_t start = at();
  if (length > file_size - start) {
    return DecodeError(path, start,
                       absl::StrCat(SpaceField(field), " claims ", length,
                                    " bytes but only ", file_size - start,
                                    " remain (truncated file?)"));
  }
  if (length > kMaxFieldBytes) {
    return DecodeError(path, start,
                       absl::StrCat(SpaceField(field), " of ", length,
                                    " bytes exceeds protobuf's 2 GiB limit"));
  }
  *recognized = true;
  return ScanKnownField(coded, field, field_start, start, length, path,
                        index);
}

absl::StatusOr<SpaceIndex> ScanSpace(int fd, uint64_t file_size,
                                     const std::string& path) {
  SpaceIndex index;
  FileInputStream stream(fd, kReadBlockBytes);
  bool recognized = false;
  while (static_cast<uint64_t>(stream.ByteCount()) < file_size) {
    if (absl::Status s = ScanField(stream, file_size, path, &index,
                                   &recognized);
        !s.ok()) {
      if (stream.GetErrno() != 0) {
        return absl::DataLossError(absl::StrCat(
            path, ": read error: ", std::strerror(stream.GetErrno())));
      }
      return s;
    }
  }
  if (!recognized) {
    return DecodeError(path, 0, "no XSpace field (planes, hostnames, ...)");
  }
  return index;
}

// Moves `stream` forward to absolute byte `target` (Skip takes an int).
bool SkipTo(FileInputStream& stream, uint64_t target) {
  while (static_cast<uint64_t>(stream.ByteCount()) < target) {
    const uint64_t gap = target - stream.ByteCount();
    if (!stream.Skip(static_cast<int>(std::min<uint64_t>(gap, INT_MAX)))) {
      return false;
    }
  }
  return static_cast<uint64_t>(stream.ByteCount()) == target;
}

// Reads `length` bytes at `offset` with pread (independent of any stream).
bool ReadBytesAt(int fd, uint64_t offset, uint64_t length, std::string* out) {
  out->resize(length);
  uint64_t done = 0;
  while (done < length) {
    const ssize_t n = pread(fd, out->data() + done, length - done,
                            static_cast<off_t>(offset + done));
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      return false;
    }
    done += static_cast<uint64_t>(n);
  }
  return true;
}

// The error for a plane that does not decode. The generated parser gives no
// position, so re-walk the plane's bytes to find the first bad one.
absl::Status PlaneDecodeError(int fd, const PlaneRef& ref, size_t plane_index,
                              const std::string& path) {
  const std::string plane = absl::StrCat("XPlane #", plane_index);
  std::string bytes;
  if (ReadBytesAt(fd, ref.offset, ref.length, &bytes)) {
    if (std::optional<xspace_wire::WireFault> fault = xspace_wire::FindWireFault(
            bytes, XPlane::descriptor());
        fault) {
      return DecodeError(path, ref.offset + fault->offset,
                         absl::StrCat(plane, ": ", fault->what));
    }
  }
  return DecodeError(path, ref.offset,
                     absl::StrCat(plane, " (", ref.length,
                                  " bytes) does not decode; the plane starts"));
}

// Decodes the plane at `ref` into `plane`. Planes are visited in file order,
// so the stream only ever moves forward.
absl::Status DecodePlane(FileInputStream& stream, int fd, const PlaneRef& ref,
                         size_t plane_index, const std::string& path,
                         XPlane* plane) {
  if (!SkipTo(stream, ref.offset)) {
    return DecodeError(path, stream.ByteCount(), "cannot seek to an XPlane");
  }
  CodedInputStream coded(&stream);
  coded.SetTotalBytesLimit(INT_MAX);
  const auto limit = coded.PushLimit(static_cast<int>(ref.length));
  // A parse that stops early (end of file) still returns true; the limit
  // tells whether the whole plane was there.
  if (!plane->ParseFromCodedStream(&coded) || coded.BytesUntilLimit() != 0) {
    return PlaneDecodeError(fd, ref, plane_index, path);
  }
  coded.PopLimit(limit);
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Identity and ordering of planes
// ---------------------------------------------------------------------------

// Plane ids become pids when they are distinct; otherwise (real files have
// /host:CPU and /device:GPU:0 both with id 0) every plane uses its index, so
// pids stay unique and stable.
std::vector<std::string> PlanePids(const std::vector<PlaneRef>& planes) {
  absl::flat_hash_set<int64_t> seen;
  bool unique = true;
  for (const PlaneRef& p : planes) unique &= seen.insert(p.id).second;
  std::vector<std::string> pids;
  pids.reserve(planes.size());
  for (size_t i = 0; i < planes.size(); ++i) {
    pids.push_back(absl::StrCat(unique ? planes[i].id
                                       : static_cast<int64_t>(i)));
  }
  return pids;
}

// Host planes first (in file order), then devices by their number
// ("/device:GPU:3" -> 3), then any other plane in file order.
int64_t PlaneSortIndex(std::string_view name, size_t index) {
  constexpr int64_t kDeviceBase = int64_t{1} << 20;
  constexpr int64_t kOtherBase = int64_t{1} << 40;
  if (absl::StartsWith(Av(name), "/host:")) return static_cast<int64_t>(index);
  if (absl::StartsWith(Av(name), "/device:")) {
    const size_t colon = name.rfind(':');
    int64_t n;
    if (absl::SimpleAtoi(Av(name.substr(colon + 1)), &n) && n >= 0 &&
        n < kOtherBase - kDeviceBase) {
      return kDeviceBase + n;
    }
  }
  return kOtherBase + static_cast<int64_t>(index);
}

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
    xspace_json::AppendString(&out, items[i]);
  }
  out.push_back(']');
  return out;
}

// ---------------------------------------------------------------------------
// Events of one plane
// ---------------------------------------------------------------------------

// Turns one decoded XPlane into sink calls. Lives for one plane: its caches
// are keyed by the plane's metadata ids.
class PlaneEmitter {
 public:
  PlaneEmitter(EventSink* sink, const XPlane& plane, std::string pid)
      : sink_(sink), plane_(plane), pid_text_(std::move(pid)) {
    for (const auto& [id, md] : plane_.stat_metadata()) {
      if (md.name() == "step_name") step_name_ids_.insert(id);
      if (md.name() == "flow") flow_ids_.insert(id);
    }
  }

  // `line_done(events_done, events_total)` runs after each line, so callers
  // can report progress inside a big plane.
  absl::Status Emit(
      int64_t sort_index,
      const std::function<void(uint64_t, uint64_t)>& line_done = {});
  // The plane's own stats (device properties) as a JSON object, or "".
  std::string PlaneStatsJson();

 private:
  // What the events of one XEventMetadata share, computed once per plane.
  struct MetaInfo {
    std::string name;  // display_name or name (or a placeholder if missing)
    uint32_t name_id = 0;
    std::string long_name_member;  // "long_name":"..." when display_name won
    // (stat metadata id, "key":value) for the metadata's stats.
    std::vector<std::pair<int64_t, std::string>> stat_members;
    const XEventMetadata* md = nullptr;
  };
  struct StatInfo {
    std::string name;
    std::string json_key;  // "name": ready to append
  };

  IdToken Pid() const { return IdToken{pid_text_, true}; }
  const MetaInfo& Meta(int64_t id);
  const StatInfo& Stat(int64_t id);
  absl::Status EmitThreadLine(const XLine& line, int64_t order);
  absl::Status EmitCounterLine(const XLine& line);
  absl::Status EmitSlice(const XLine& line, const XEvent& event,
                         uint32_t track, uint32_t cat);
  absl::Status EmitFlow(const Event& slice, uint64_t flow);
  void BuildArgs(const MetaInfo& meta, const XEvent& event);
  std::optional<int64_t> StartPs(const XLine& line, const XEvent& event);
  const XStat* FindCounterValue(const MetaInfo& meta, const XEvent& event,
                                double* value) const;
  void ReportNotes();

  EventSink* sink_;
  const XPlane& plane_;
  std::string pid_text_;
  absl::flat_hash_set<int64_t> step_name_ids_;
  absl::flat_hash_set<int64_t> flow_ids_;
  absl::flat_hash_map<int64_t, MetaInfo> meta_cache_;
  absl::flat_hash_map<int64_t, StatInfo> stat_cache_;
  absl::flat_hash_map<uint64_t, uint32_t> flow_cat_cache_;
  absl::flat_hash_set<int64_t> named_tids_;
  std::string args_;  // reused buffer for Event.args_json
  // Oddities counted here and reported once per plane.
  uint64_t missing_metadata_ = 0;
  uint64_t bad_times_ = 0;
  std::string first_bad_time_;
  uint64_t negative_durations_ = 0;
};

const PlaneEmitter::StatInfo& PlaneEmitter::Stat(int64_t id) {
  auto [it, inserted] = stat_cache_.try_emplace(id);
  if (inserted) {
    auto md = plane_.stat_metadata().find(id);
    // A stat with no metadata keeps its id visible instead of being dropped.
    it->second.name = md != plane_.stat_metadata().end()
                          ? md->second.name()
                          : absl::StrCat("stat#", id);
    xspace_json::AppendString(&it->second.json_key, it->second.name);
    it->second.json_key.push_back(':');
  }
  return it->second;
}

const PlaneEmitter::MetaInfo& PlaneEmitter::Meta(int64_t id) {
  auto [it, inserted] = meta_cache_.try_emplace(id);
  if (!inserted) return it->second;
  MetaInfo& info = it->second;
  auto md = plane_.event_metadata().find(id);
  if (md == plane_.event_metadata().end()) {
    info.name = absl::StrCat("<event metadata ", id, ">");
  } else {
    info.md = &md->second;
    if (!info.md->display_name().empty()) {
      info.name = info.md->display_name();
      info.long_name_member = "\"long_name\":";
      xspace_json::AppendString(&info.long_name_member, info.md->name());
    } else {
      info.name = info.md->name();
    }
    for (const XStat& stat : info.md->stats()) {
      if (step_name_ids_.contains(stat.metadata_id())) {
        info.name = xspace_json::StatText(stat, plane_.stat_metadata());
      }
      std::string member = Stat(stat.metadata_id()).json_key;
      xspace_json::AppendStatValue(&member, stat, plane_.stat_metadata());
      info.stat_members.emplace_back(stat.metadata_id(), std::move(member));
    }
  }
  info.name_id = sink_->Intern(info.name);
  return info;
}

absl::Status PlaneEmitter::Emit(
    int64_t sort_index,
    const std::function<void(uint64_t, uint64_t)>& line_done) {
  sink_->SetProcessName(Pid(), plane_.name());
  sink_->SetProcessSortIndex(Pid(), sort_index);
  uint64_t total = 0;
  for (const XLine& line : plane_.lines()) total += line.events_size();
  uint64_t done = 0;
  for (int i = 0; i < plane_.lines_size(); ++i) {
    const XLine& line = plane_.lines(i);
    absl::Status s = line.name() == kCountersLine
                         ? EmitCounterLine(line)
                         : EmitThreadLine(line, i);
    if (!s.ok()) return s;
    done += line.events_size();
    if (line_done) line_done(done, total);
  }
  ReportNotes();
  return absl::OkStatus();
}

std::string PlaneEmitter::PlaneStatsJson() {
  if (plane_.stats().empty()) return "";
  std::string out = "{";
  for (const XStat& stat : plane_.stats()) {
    if (out.size() > 1) out.push_back(',');
    out.append(Stat(stat.metadata_id()).json_key);
    xspace_json::AppendStatValue(&out, stat, plane_.stat_metadata());
  }
  out.push_back('}');
  return out;
}

void PlaneEmitter::ReportNotes() {
  const std::string where = absl::StrCat("xspace plane '", plane_.name(), "'");
  if (missing_metadata_ > 0) {
    sink_->Warn(absl::StrCat(where, ": ", missing_metadata_,
                             " events refer to missing event metadata"));
  }
  if (bad_times_ > 0) {
    sink_->Warn(absl::StrCat(where, ": ", bad_times_,
                             " events skipped, time out of range (first: ",
                             first_bad_time_, ")"));
  }
  if (negative_durations_ > 0) {
    sink_->Warn(absl::StrCat(where, ": ", negative_durations_,
                             " negative durations stored as 0"));
  }
}

// line.timestamp_ns * 1000 + offset_ps, split into ns + 0..999 ps with floor
// division so negative offsets land on the right picosecond.
std::optional<int64_t> PlaneEmitter::StartPs(const XLine& line,
                                             const XEvent& event) {
  const int64_t offset = event.offset_ps();
  int64_t ns = offset / 1000;
  int64_t ps = offset % 1000;
  if (ps < 0) {
    ps += 1000;
    --ns;
  }
  int64_t abs_ns;
  absl::StatusOr<int64_t> rel =
      __builtin_add_overflow(line.timestamp_ns(), ns, &abs_ns)
          ? absl::OutOfRangeError("timestamp_ns + offset overflows int64")
          : sink_->ToRelativePs(abs_ns, static_cast<int32_t>(ps));
  if (rel.ok()) return *rel;
  // One bad line timestamp should not lose the rest of the profile.
  if (bad_times_++ == 0) first_bad_time_ = rel.status().ToString();
  sink_->CountSkipped("xspace event time out of range");
  return std::nullopt;
}

absl::Status PlaneEmitter::EmitThreadLine(const XLine& line, int64_t order) {
  const int64_t tid_num = line.display_id() != 0 ? line.display_id() : line.id();
  const std::string tid_text = absl::StrCat(tid_num);
  const IdToken tid{tid_text, true};
  const uint32_t track = sink_->ThreadTrack(Pid(), tid);
  // Lines sharing a display_id are meant to be shown as one thread; the
  // first one names it.
  if (named_tids_.insert(tid_num).second) {
    sink_->SetThreadName(Pid(), tid,
                         line.display_name().empty() ? line.name()
                                                     : line.display_name());
    sink_->SetThreadSortIndex(Pid(), tid, order);
  }
  const uint32_t cat = sink_->Intern(line.name());
  for (const XEvent& event : line.events()) {
    if (absl::Status s = EmitSlice(line, event, track, cat); !s.ok()) return s;
  }
  return absl::OkStatus();
}

void PlaneEmitter::BuildArgs(const MetaInfo& meta, const XEvent& event) {
  args_.clear();
  args_.push_back('{');
  const auto separate = [&] {
    if (args_.size() > 1) args_.push_back(',');
  };
  if (!meta.long_name_member.empty()) {
    separate();
    args_.append(meta.long_name_member);
  }
  for (const auto& [id, member] : meta.stat_members) {
    // An event stat with the same key overrides the metadata's default.
    bool overridden = false;
    for (const XStat& s : event.stats()) overridden |= s.metadata_id() == id;
    if (overridden) continue;
    separate();
    args_.append(member);
  }
  for (const XStat& stat : event.stats()) {
    separate();
    args_.append(Stat(stat.metadata_id()).json_key);
    xspace_json::AppendStatValue(&args_, stat, plane_.stat_metadata());
  }
  if (args_.size() == 1) {
    args_.clear();
  } else {
    args_.push_back('}');
  }
}

absl::Status PlaneEmitter::EmitSlice(const XLine& line, const XEvent& event,
                                     uint32_t track, uint32_t cat) {
  if (event.data_case() == XEvent::kNumOccurrences) {
    sink_->CountSkipped("xspace aggregated event");
    return absl::OkStatus();
  }
  const std::optional<int64_t> ts = StartPs(line, event);
  if (!ts) return absl::OkStatus();
  const MetaInfo& meta = Meta(event.metadata_id());
  if (meta.md == nullptr) ++missing_metadata_;

  Event slice;
  slice.kind = EventKind::kSlice;
  slice.track = track;
  slice.ts = *ts;
  slice.dur = event.duration_ps();
  if (slice.dur < 0) {
    ++negative_durations_;
    slice.dur = 0;
  }
  slice.name = meta.name_id;
  slice.cat = cat;
  for (const XStat& stat : event.stats()) {
    if (step_name_ids_.contains(stat.metadata_id())) {
      slice.name =
          sink_->Intern(xspace_json::StatText(stat, plane_.stat_metadata()));
    }
  }
  BuildArgs(meta, event);
  slice.args_json = args_;
  if (!args_.empty()) slice.flags |= kFlagHasArgs;
  if (absl::Status s = sink_->Add(slice); !s.ok()) return s;

  for (const XStat& stat : event.stats()) {
    if (!flow_ids_.contains(stat.metadata_id())) continue;
    if (stat.value_case() == XStat::kUint64Value) {
      if (absl::Status s = EmitFlow(slice, stat.uint64_value()); !s.ok()) {
        return s;
      }
    } else if (stat.value_case() == XStat::kInt64Value) {
      if (absl::Status s = EmitFlow(slice, static_cast<uint64_t>(stat.int64_value()));
          !s.ok()) {
        return s;
      }
    } else {
      sink_->CountSkipped("xspace flow stat that is not an integer");
    }
  }
  return absl::OkStatus();
}

// `flow` packs direction (bits 0-1), id (bits 2-57) and category (58-63).
// The flow event sits at the slice's start on the slice's track and binds to
// the enclosing slice, i.e. to this one.
absl::Status PlaneEmitter::EmitFlow(const Event& slice, uint64_t flow) {
  constexpr uint64_t kIdMask = (uint64_t{1} << 56) - 1;
  const uint64_t direction = flow & 3;
  const uint64_t id = (flow >> 2) & kIdMask;
  const uint64_t category = flow >> 58;
  Event e;
  switch (direction) {
    case 1: e.kind = EventKind::kFlowEnd; break;
    case 2: e.kind = EventKind::kFlowStart; break;
    case 3: e.kind = EventKind::kFlowStep; break;
    default:
      sink_->CountSkipped("xspace flow stat without a direction");
      return absl::OkStatus();
  }
  e.track = slice.track;
  e.ts = slice.ts;
  e.name = slice.name;
  // Both ends of a flow sit on different lines (different slice cats); the
  // flow's own category is what they share.
  auto [it, inserted] = flow_cat_cache_.try_emplace(category);
  if (inserted) it->second = sink_->Intern(absl::StrCat("xspace.flow.", category));
  e.cat = it->second;
  e.flags = kFlagBindEnclosing;
  e.flow_id = sink_->Intern(absl::StrCat(id));
  return sink_->Add(e);
}

// The counter value: the first numeric stat of the event, else of its
// metadata.
const XStat* PlaneEmitter::FindCounterValue(const MetaInfo& meta,
                                            const XEvent& event,
                                            double* value) const {
  for (const XStat& stat : event.stats()) {
    if (xspace_json::StatNumber(stat, value)) return &stat;
  }
  if (meta.md != nullptr) {
    for (const XStat& stat : meta.md->stats()) {
      if (xspace_json::StatNumber(stat, value)) return &stat;
    }
  }
  return nullptr;
}

absl::Status PlaneEmitter::EmitCounterLine(const XLine& line) {
  const uint32_t cat = sink_->Intern(line.name());
  for (const XEvent& event : line.events()) {
    if (event.data_case() == XEvent::kNumOccurrences) {
      sink_->CountSkipped("xspace aggregated event");
      continue;
    }
    const MetaInfo& meta = Meta(event.metadata_id());
    if (meta.md == nullptr) ++missing_metadata_;
    double value = 0;
    const XStat* stat = FindCounterValue(meta, event, &value);
    if (stat == nullptr) {
      sink_->CountSkipped("xspace counter sample without a numeric stat");
      continue;
    }
    const std::optional<int64_t> ts = StartPs(line, event);
    if (!ts) continue;
    const std::string& series = Stat(stat->metadata_id()).name;
    Event sample;
    sample.kind = EventKind::kCounter;
    sample.track = sink_->CounterTrack(Pid(), meta.name, series);
    sample.ts = *ts;
    sample.name = sink_->Intern(series);
    sample.cat = cat;
    sample.value = value;
    if (absl::Status s = sink_->Add(sample); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Whole file
// ---------------------------------------------------------------------------

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

}  // namespace

absl::Status ReadXSpace(
    const std::string& path, std::string_view host, EventSink* sink,
    const std::function<void(uint64_t done, uint64_t total)>& progress) {
  int raw_fd = -1;
  absl::StatusOr<uint64_t> size = OpenRegularFile(path, &raw_fd);
  ScopedFd fd(raw_fd);
  if (!size.ok()) return size.status();
  absl::StatusOr<SpaceIndex> index = ScanSpace(fd.get(), *size, path);
  if (!index.ok()) return index.status();

  sink->BeginInput(path, host.empty() ? DefaultHost(path, index->hostnames)
                                      : std::string(host));
  ReportSpaceFields(*index, sink);
  if (progress) progress(0, *size);

  const std::vector<std::string> pids = PlanePids(index->planes);
  std::string plane_stats;  // {"<plane name>":{...},...}
  // The scan left the descriptor at the end; FileInputStream reads from the
  // descriptor's current position.
  if (lseek(fd.get(), 0, SEEK_SET) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": cannot seek: ", std::strerror(errno)));
  }
  FileInputStream stream(fd.get(), kReadBlockBytes);
  for (size_t i = 0; i < index->planes.size(); ++i) {
    const PlaneRef& ref = index->planes[i];
    // One arena per plane: decoding is faster and freeing is one call.
    google::protobuf::Arena arena;
    XPlane* plane = google::protobuf::Arena::CreateMessage<XPlane>(&arena);
    if (absl::Status s = DecodePlane(stream, fd.get(), ref, i, path, plane); !s.ok()) {
      return s;
    }
    PlaneEmitter emitter(sink, *plane, pids[i]);
    // Within a plane, progress moves with the share of its events emitted.
    std::function<void(uint64_t, uint64_t)> line_done;
    if (progress) {
      line_done = [&](uint64_t done, uint64_t total) {
        if (total > 0) progress(ref.offset + ref.length * done / total, *size);
      };
    }
    if (absl::Status s = emitter.Emit(PlaneSortIndex(plane->name(), i),
                                      line_done);
        !s.ok()) {
      return s;
    }
    if (std::string stats = emitter.PlaneStatsJson(); !stats.empty()) {
      plane_stats.append(plane_stats.empty() ? "{" : ",");
      xspace_json::AppendString(&plane_stats, plane->name());
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
