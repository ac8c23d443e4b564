#include "ingest/xspace/space_file.h"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "format/absl_compat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "google/protobuf/wire_format_lite.h"
#include "ingest/xspace/stat_json.h"
#include "ingest/xspace/wire_check.h"
#include "ingest/xspace/xplane.pb.h"

namespace tracetable::xspace_internal {
namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;
using google::protobuf::io::FileInputStream;
using tracetable::xspace::XPlane;

constexpr int kReadBlockBytes = 1 << 16;
// CodedInputStream counts bytes in an int; leave room for a field's tag and
// length in front of its payload.
constexpr uint64_t kMaxFieldBytes = INT_MAX - 32;

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
  if (!IsValidUtf8(text)) {
    return DecodeError(path, start, absl::StrCat(SpaceField(field), " is not UTF-8"));
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

// Reads `length` bytes at `offset` with pread (independent of any stream).
bool ReadBytesAt(int fd, uint64_t offset, uint64_t length, std::string* out) {
  out->resize(length);
  uint64_t done = 0;
  while (done < length) {
    const ssize_t n = pread(fd, out->data() + done, length - done,
                            static_cast<off_t>(offset + done));
    if (n == 0) errno = 0;  // end of file: the file shrank since the scan
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      return false;
    }
    done += static_cast<uint64_t>(n);
  }
  return true;
}

// The error for a plane that does not decode. The decoder gives no
// position, so re-walk the plane's bytes to find the first bad one.
absl::Status PlaneDecodeError(std::string_view bytes, const PlaneRef& ref,
                              size_t plane_index, const std::string& path) {
  const std::string plane = absl::StrCat("XPlane #", plane_index);
  if (std::optional<xspace_wire::WireFault> fault =
          xspace_wire::FindWireFault(bytes, XPlane::descriptor());
      fault) {
    return DecodeError(path, ref.offset + fault->offset,
                       absl::StrCat(plane, ": ", fault->what));
  }
  return DecodeError(path, ref.offset,
                     absl::StrCat(plane, " (", ref.length,
                                  " bytes) does not decode; the plane starts"));
}

}  // namespace

absl::Status DecodeError(const std::string& path, uint64_t offset,
                         std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": not a valid XSpace (.xplane.pb): ", Av(what),
                   " at byte offset ", offset));
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

absl::Status PlaneDecoder::Decode(const PlaneRef& ref, size_t plane_index,
                                  xspace_wire::PlaneView* plane) {
  if (!ReadBytesAt(fd_, ref.offset, ref.length, bytes_)) {
    return absl::DataLossError(absl::StrCat(
        path_, ": read error in XPlane #", plane_index, " at byte offset ",
        ref.offset, ": ",
        errno != 0 ? std::strerror(errno) : "file shrank since it was scanned"));
  }
  if (!xspace_wire::DecodePlane(*bytes_, plane)) {
    return PlaneDecodeError(*bytes_, ref, plane_index, path_);
  }
  return absl::OkStatus();
}

}  // namespace tracetable::xspace_internal
