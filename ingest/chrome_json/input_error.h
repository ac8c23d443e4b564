// Formats the reader's error messages so every failure names the file, the
// byte offset and what was expected:
//   "<path>: byte <offset>: expected <what>, got <what>"
// For gzip input offsets count decompressed bytes and say so, because that is
// the only offset a user can look up (zcat file | tail -c +N).
#ifndef TRACETABLE_INGEST_CHROME_JSON_INPUT_ERROR_H_
#define TRACETABLE_INGEST_CHROME_JSON_INPUT_ERROR_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace tracetable::chrome_json {

struct InputErrorContext {
  std::string path;
  bool gzip = false;

  // "<path>: byte <offset>: expected <expected>, got <got>".
  absl::Status Error(uint64_t offset, std::string_view expected,
                     std::string_view got) const;
  // "<path>: byte <offset>: <message>" (for Warn).
  std::string At(uint64_t offset, std::string_view message) const;
};

// Describes the byte at p[0] for a message: "'x'", "byte 0xff", and
// "end of file" when p is null.
std::string DescribeByte(const char* p);

// Shows up to 40 characters of `text` quoted, for "got ..." parts.
std::string Quote(std::string_view text);

}  // namespace tracetable::chrome_json

#endif  // TRACETABLE_INGEST_CHROME_JSON_INPUT_ERROR_H_
