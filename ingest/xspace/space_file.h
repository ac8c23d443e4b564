// The XSpace container on disk: finding its planes without decoding them,
// then decoding them one at a time.
//
// Contract:
//  - ScanSpace walks the top-level fields of the file through a
//    FileInputStream: each plane is skimmed for its id and name and its bulk
//    (lines, metadata maps) is skipped with seeks; errors, warnings and
//    hostnames are read in full. Any structural fault (bad tag or wire type,
//    a length past the end of the file, non-UTF-8 strings, no XSpace field at
//    all) is an InvalidArgumentError naming the file and byte offset.
//  - PlaneDecoder reads the planes of a scan one at a time into one reused
//    buffer and decodes them there (wire_reader.h), so memory holds one
//    plane's bytes and views at a time. A plane that does not decode is
//    located to the first bad byte (wire_check.h); a read error is a
//    DataLossError.
#ifndef TRACETABLE_INGEST_XSPACE_SPACE_FILE_H_
#define TRACETABLE_INGEST_XSPACE_SPACE_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ingest/xspace/wire_reader.h"

namespace tracetable::xspace_internal {

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

// InvalidArgumentError "<path>: not a valid XSpace (.xplane.pb): <what> at
// byte offset <offset>".
absl::Status DecodeError(const std::string& path, uint64_t offset,
                         std::string_view what);

// Pass 1. `fd` is read from its current position, which must be 0.
absl::StatusOr<SpaceIndex> ScanSpace(int fd, uint64_t file_size,
                                     const std::string& path);

// Pass 2: decodes planes of a scan. `fd` must stay open while the decoder
// is used; the plane's bytes go to `*bytes`, which `plane`'s views point
// into until the next Decode.
class PlaneDecoder {
 public:
  PlaneDecoder(int fd, std::string path, std::string* bytes)
      : fd_(fd), path_(std::move(path)), bytes_(bytes) {}
  absl::Status Decode(const PlaneRef& ref, size_t plane_index,
                      xspace_wire::PlaneView* plane);

 private:
  int fd_;
  std::string path_;
  std::string* bytes_;
};

}  // namespace tracetable::xspace_internal

#endif  // TRACETABLE_INGEST_XSPACE_SPACE_FILE_H_
