// Gunzip for the serve tests: the body of a gzip answer, or "<bad gzip>" when
// it is not one whole gzip stream (so a broken answer never compares equal).
#ifndef TRACETABLE_TESTS_SERVE_GUNZIP_H_
#define TRACETABLE_TESTS_SERVE_GUNZIP_H_

#include <string>

#include "zlib.h"

namespace tracetable::serve {

inline std::string Gunzip(const std::string& in) {
  z_stream z{};
  inflateInit2(&z, 15 + 16);
  std::string out;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  char buf[1 << 16];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof(buf);
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - z.avail_out);
  }
  inflateEnd(&z);
  return rc == Z_STREAM_END ? out : "<bad gzip>";
}

}  // namespace tracetable::serve

#endif  // TRACETABLE_TESTS_SERVE_GUNZIP_H_
