#include "query/tile_pack.h"

#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "format/absl_compat.h"
#include "format/varint.h"

namespace tracetable {
namespace {

constexpr size_t kHeader = 64;
constexpr uint32_t kMagic = 0x31425454;  // "TTB1", as tiles.h
// Kind-byte bits of version 2 (version-1 kinds are 0..5, +128 for summaries).
constexpr uint8_t kHasId = 0x10;
constexpr uint8_t kHasValue = 0x20;
constexpr uint8_t kHasCovered = 0x40;  // covered/longest differ from dur
constexpr uint8_t kPackBits = kHasId | kHasValue | kHasCovered;
constexpr int kTimeCols = 4;           // start, dur, covered, longest
constexpr int kWordCols = 6;           // name, cat, lane, count, flags, flow

size_t Pad(size_t n, size_t to) { return (n + to - 1) / to * to; }

template <typename T>
T Load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T>
void Store(std::string* out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out->append(b, sizeof(T));
}

// The counts of a header, and where the version-1 columns are.
struct Shape {
  uint32_t tracks = 0, n = 0, m = 0, sbytes = 0;
  size_t cols = 0;     // first item column (version 1)
  size_t strings = 0;  // string section, version 1
};

absl::Status Bad(std::string_view what) {
  return absl::DataLossError(absl::StrCat("damaged tile answer: ", Av(what)));
}

absl::StatusOr<Shape> ReadShape(std::string_view b, uint32_t version) {
  if (b.size() < kHeader) return Bad("short header");
  if (Load<uint32_t>(b.data()) != kMagic) return Bad("magic");
  if (Load<uint32_t>(b.data() + 4) != version) return Bad(absl::StrCat("version ", Load<uint32_t>(b.data() + 4)));
  Shape s;
  s.tracks = Load<uint32_t>(b.data() + 44);
  s.n = Load<uint32_t>(b.data() + 48);
  s.m = Load<uint32_t>(b.data() + 52);
  s.sbytes = Load<uint32_t>(b.data() + 56);
  s.cols = kHeader + Pad(8ull * s.tracks, 8);
  s.strings = s.cols + 48ull * s.n + Pad(25ull * s.n, 8);
  return s;
}

// Reads varints (and raw words) of a version-2 answer, failing past the end.
class VarReader {
 public:
  VarReader(std::string_view b, size_t pos) : b_(b), pos_(pos) {}
  bool Next(uint64_t* v) {
    uint64_t r = 0;
    for (int shift = 0; shift < 64 && pos_ < b_.size(); shift += 7) {
      const uint8_t c = static_cast<uint8_t>(b_[pos_++]);
      if (shift == 63 && c > 1) return false;  // more than 64 bits
      r |= static_cast<uint64_t>(c & 0x7f) << shift;
      if (!(c & 0x80)) {
        *v = r;
        return true;
      }
    }
    return false;
  }
  bool Raw(size_t n, const char** p) {
    if (pos_ + n > b_.size()) return false;
    *p = b_.data() + pos_;
    pos_ += n;
    return true;
  }
  size_t pos() const { return pos_; }

 private:
  std::string_view b_;
  size_t pos_;
};

// Which item starts a track (deltas restart there).
std::vector<bool> TrackHeads(const char* counts, uint32_t tracks, uint32_t n) {
  std::vector<bool> head(n, false);
  uint64_t at = 0;
  for (uint32_t t = 0; t < tracks; ++t) {
    if (at < n) head[at] = true;
    at += Load<uint32_t>(counts + 4 * t);
  }
  return head;
}

}  // namespace

absl::StatusOr<std::string> PackTileAnswer(std::string_view b) {
  absl::StatusOr<Shape> shape = ReadShape(b, 1);
  if (!shape.ok()) return shape.status();
  const Shape& s = *shape;
  if (s.strings + Pad(8ull * s.m + s.sbytes, 8) != b.size()) return Bad("size");
  const uint32_t n = s.n;
  const char* col = b.data() + s.cols;
  auto i64 = [&](int c, uint32_t i) { return Load<int64_t>(col + 8ull * n * c + 8ull * i); };
  auto u32 = [&](int c, uint32_t i) { return Load<uint32_t>(col + 48ull * n + 4ull * n * c + 4ull * i); };
  const char* kinds = col + 72ull * n;
  // The largest unit every time value is a multiple of.
  uint64_t g = 0;
  for (int c : {0, 1, 4, 5}) {
    for (uint32_t i = 0; i < n; ++i) {
      const int64_t v = i64(c, i);
      g = std::gcd(g, v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v));
    }
  }
  const int64_t unit = (g == 0 || g > UINT32_MAX) ? 1 : static_cast<int64_t>(g);

  std::string out(b.substr(0, s.cols));  // header, track ids and counts (8T: no padding)
  uint32_t v2 = 2;
  std::memcpy(out.data() + 4, &v2, 4);
  const uint32_t unit32 = static_cast<uint32_t>(unit);
  std::memcpy(out.data() + 60, &unit32, 4);
  std::vector<uint8_t> k2(n);
  for (uint32_t i = 0; i < n; ++i) {
    const uint8_t k = static_cast<uint8_t>(kinds[i]);
    if (k & kPackBits) return Bad("kind");
    const int64_t dur = i64(1, i);
    k2[i] = k | (i64(2, i) ? kHasId : 0) | (i64(3, i) ? kHasValue : 0) |
            (i64(4, i) != dur || i64(5, i) != dur ? kHasCovered : 0);
    out.push_back(static_cast<char>(k2[i]));
  }
  const std::vector<bool> head = TrackHeads(b.data() + kHeader + 4ull * s.tracks, s.tracks, n);
  int64_t prev = 0;
  for (uint32_t i = 0; i < n; ++i) {
    if (head[i]) prev = 0;
    const int64_t t = i64(0, i) / unit;
    AppendVarint(&out, ZigZag(t - prev));
    prev = t;
  }
  for (uint32_t i = 0; i < n; ++i) AppendVarint(&out, ZigZag(i64(1, i) / unit));
  prev = 0;
  for (uint32_t i = 0; i < n; ++i) {
    if (head[i]) prev = 0;
    if (!(k2[i] & kHasId)) continue;
    // Wrapping difference: ids are u64 and the delta is taken mod 2^64.
    const uint64_t id = static_cast<uint64_t>(i64(2, i));
    AppendVarint(&out, ZigZag(static_cast<int64_t>(id - static_cast<uint64_t>(prev))));
    prev = static_cast<int64_t>(id);
  }
  for (uint32_t i = 0; i < n; ++i) {
    if (k2[i] & kHasValue) Store(&out, i64(3, i));
  }
  for (uint32_t i = 0; i < n; ++i) {
    if (!(k2[i] & kHasCovered)) continue;
    AppendVarint(&out, ZigZag(i64(4, i) / unit));
    AppendVarint(&out, ZigZag(i64(5, i) / unit));
  }
  for (int c = 0; c < kWordCols; ++c) {
    for (uint32_t i = 0; i < n; ++i) AppendVarint(&out, u32(c, i));
  }
  out.resize(Pad(out.size(), 4), '\0');
  out.append(b.substr(s.strings, 8ull * s.m + s.sbytes));
  out.resize(Pad(out.size(), 8), '\0');
  return out;
}

absl::StatusOr<std::string> UnpackTileAnswer(std::string_view b) {
  absl::StatusOr<Shape> shape = ReadShape(b, kTileCompactVersion);
  if (!shape.ok()) return shape.status();
  const Shape& s = *shape;
  const uint32_t n = s.n;
  const size_t ids_end = kHeader + 8ull * s.tracks;
  if (ids_end + n > b.size()) return Bad("size");
  const int64_t unit = Load<uint32_t>(b.data() + 60);
  if (unit == 0) return Bad("time unit 0");
  uint64_t total = 0;
  for (uint32_t t = 0; t < s.tracks; ++t) total += Load<uint32_t>(b.data() + kHeader + 4ull * s.tracks + 4ull * t);
  if (total != n) return Bad("track counts do not add up to the items");
  const char* k2 = b.data() + ids_end;
  for (uint32_t i = 0; i < n; ++i) {
    if ((static_cast<uint8_t>(k2[i]) & 0x0f) > 5) return Bad("kind");
  }
  const std::vector<bool> head = TrackHeads(b.data() + kHeader + 4ull * s.tracks, s.tracks, n);
  std::vector<int64_t> cols(6ull * n, 0);  // start, dur, id, value, covered, longest
  std::vector<uint32_t> words(static_cast<size_t>(kWordCols) * n);
  VarReader r(b, ids_end + n);
  uint64_t v = 0;
  // A time in units back to ps; one that overflows was never written by Pack.
  auto time = [&](uint64_t z, int64_t base, int64_t* ps) {
    int64_t t;
    return !__builtin_add_overflow(base, UnZigZag(z), &t) && !__builtin_mul_overflow(t, unit, ps);
  };
  int64_t prev = 0;
  for (uint32_t i = 0; i < n; ++i) {
    if (head[i]) prev = 0;
    if (!r.Next(&v) || !time(v, prev, &cols[i])) return Bad("start column");
    prev = cols[i] / unit;
  }
  for (uint32_t i = 0; i < n; ++i) {
    if (!r.Next(&v) || !time(v, 0, &cols[n + i])) return Bad("duration column");
  }
  uint64_t prev_id = 0;
  for (uint32_t i = 0; i < n; ++i) {
    if (head[i]) prev_id = 0;
    if (!(k2[i] & kHasId)) continue;
    if (!r.Next(&v)) return Bad("id column");
    prev_id += static_cast<uint64_t>(UnZigZag(v));
    if (prev_id == 0) return Bad("id 0 marked as present");
    cols[2ull * n + i] = static_cast<int64_t>(prev_id);
  }
  for (uint32_t i = 0; i < n; ++i) {
    const char* p = nullptr;
    if (!(k2[i] & kHasValue)) continue;
    if (!r.Raw(8, &p)) return Bad("value column");
    cols[3ull * n + i] = Load<int64_t>(p);
    if (cols[3ull * n + i] == 0) return Bad("value 0 marked as present");
  }
  for (uint32_t i = 0; i < n; ++i) {
    const int64_t dur = cols[n + i];
    if (!(k2[i] & kHasCovered)) {
      cols[4ull * n + i] = cols[5ull * n + i] = dur;
      continue;
    }
    if (!r.Next(&v) || !time(v, 0, &cols[4ull * n + i])) return Bad("covered column");
    if (!r.Next(&v) || !time(v, 0, &cols[5ull * n + i])) return Bad("longest column");
    if (cols[4ull * n + i] == dur && cols[5ull * n + i] == dur) return Bad("covered marked as different");
  }
  for (uint32_t& w : words) {
    if (!r.Next(&v) || v > UINT32_MAX) return Bad("word column");
    w = static_cast<uint32_t>(v);
  }
  const size_t strings = Pad(r.pos(), 4);
  if (strings + 8ull * s.m + s.sbytes > b.size() || Pad(strings + 8ull * s.m + s.sbytes, 8) != b.size()) {
    return Bad("size");
  }
  std::string out(b.substr(0, ids_end));
  const uint32_t v1 = 1, zero = 0;
  std::memcpy(out.data() + 4, &v1, 4);
  std::memcpy(out.data() + 60, &zero, 4);
  out.resize(Pad(out.size(), 8), '\0');
  for (int64_t c : cols) Store(&out, c);
  for (uint32_t w : words) Store(&out, w);
  for (uint32_t i = 0; i < n; ++i) out.push_back(static_cast<char>(static_cast<uint8_t>(k2[i]) & ~kPackBits));
  out.resize(Pad(out.size(), 8), '\0');
  out.append(b.substr(strings, 8ull * s.m + s.sbytes));
  out.resize(Pad(out.size(), 8), '\0');
  // The strings' own lengths are checked where they are read (DecodeTileAnswer).
  return out;
}

}  // namespace tracetable
