#include "query/serve/gzip_stream.h"

namespace tracetable::serve {

GzipStream::GzipStream() {
  ok_ = deflateInit2(&z_, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK;
}

GzipStream::~GzipStream() {
  if (ok_) deflateEnd(&z_);
}

bool GzipStream::Add(std::string_view in, bool last, std::string* out) {
  if (!ok_) return false;
  z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z_.avail_in = static_cast<uInt>(in.size());
  const int flush = last ? Z_FINISH : Z_NO_FLUSH;
  for (;;) {
    const size_t at = out->size();
    const size_t room = deflateBound(&z_, z_.avail_in) + 64;
    out->resize(at + room);
    z_.next_out = reinterpret_cast<Bytef*>(out->data() + at);
    z_.avail_out = static_cast<uInt>(room);
    const int rc = deflate(&z_, flush);
    out->resize(at + room - z_.avail_out);
    if (rc == Z_STREAM_END) return true;
    if (rc != Z_OK && rc != Z_BUF_ERROR) return false;
    if (!last && z_.avail_in == 0) return true;
  }
}

bool Gzip(std::string_view in, std::string* out) {
  if (in.size() >= (1ull << 31)) return false;
  GzipStream z;
  return z.Add(in, true, out);
}

}  // namespace tracetable::serve
