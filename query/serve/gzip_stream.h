// gzip (level 1) over a body given in pieces, for answers sent in chunks:
// each piece is compressed as it comes, so a streamed answer never exists
// whole, compressed or not. Level 1: answers are large JSON; it is twice as
// fast as zlib's default for ~25% more bytes. Not thread-safe; one per answer.
#ifndef TRACETABLE_QUERY_SERVE_GZIP_STREAM_H_
#define TRACETABLE_QUERY_SERVE_GZIP_STREAM_H_

#include <string>
#include <string_view>

#include "zlib.h"

namespace tracetable::serve {

class GzipStream {
 public:
  GzipStream();
  ~GzipStream();
  GzipStream(const GzipStream&) = delete;
  GzipStream& operator=(const GzipStream&) = delete;

  // Appends the compressed form of `in` to *out (possibly nothing yet: zlib
  // buffers); `last` ends the stream. False on a zlib failure.
  bool Add(std::string_view in, bool last, std::string* out);

 private:
  z_stream z_{};
  bool ok_ = false;
};

// The whole of `in`, compressed.
bool Gzip(std::string_view in, std::string* out);

}  // namespace tracetable::serve

#endif  // TRACETABLE_QUERY_SERVE_GZIP_STREAM_H_
