// Little-endian fixed-width integers and the CRC-32 (zlib's) that frame
// tracetable's own small files (RUN, RUN.view; docs/format.md) and name
// tables without a written identity. GetFixed32 reads the first 4 bytes of
// `in`, which the caller has checked are there.
#ifndef TRACETABLE_STORE_FIXED_CODING_H_
#define TRACETABLE_STORE_FIXED_CODING_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "zlib.h"

namespace tracetable {

inline uint32_t Crc32(std::string_view bytes) {
  return static_cast<uint32_t>(crc32(crc32(0, nullptr, 0), reinterpret_cast<const Bytef*>(bytes.data()),
                                     static_cast<uInt>(bytes.size())));
}

inline void PutFixed32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

inline uint32_t GetFixed32(std::string_view in) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(in[i]);
  return v;
}

}  // namespace tracetable

#endif  // TRACETABLE_STORE_FIXED_CODING_H_
