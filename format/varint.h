// Base-128 varints (the protobuf wire encoding) for values packed by hand
// into strings, where a protobuf message per value would cost too much.
// ReadVarint advances *pos past the varint, and fails on a truncated or
// over-long (more than 10 bytes) one without reading past `s`. Signed values
// go through ZigZag (small magnitudes stay short); byte strings are framed
// with their length (GetLengthPrefixed fails on one running past `s`).
#ifndef TRACETABLE_FORMAT_VARINT_H_
#define TRACETABLE_FORMAT_VARINT_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tracetable {

inline void AppendVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

inline bool ReadVarint(std::string_view s, size_t* pos, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 64 && *pos < s.size(); shift += 7) {
    const uint8_t b = static_cast<uint8_t>(s[(*pos)++]);
    *v |= static_cast<uint64_t>(b & 0x7F) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

// Bytes AppendVarint takes for v.
inline int VarintLength(uint64_t v) { return (std::bit_width(v | 1) + 6) / 7; }

inline uint64_t ZigZag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
inline int64_t UnZigZag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

inline void AppendLengthPrefixed(std::string* out, std::string_view b) {
  AppendVarint(out, b.size());
  out->append(b);
}

inline bool GetLengthPrefixed(std::string_view s, size_t* pos, std::string_view* b) {
  uint64_t n = 0;
  if (!ReadVarint(s, pos, &n) || n > s.size() - *pos) return false;
  *b = s.substr(*pos, n);
  *pos += n;
  return true;
}

}  // namespace tracetable

#endif  // TRACETABLE_FORMAT_VARINT_H_
