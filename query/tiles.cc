#include "query/tiles.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <deque>
#include <limits>

#include "absl/strings/str_cat.h"
#include "format/absl_compat.h"
#include "format/event.h"
#include "format/flow_id.h"
#include "query/tile_pack.h"

namespace tracetable {
namespace {

// Tile-only bits of the flags column (event flags use the low bits).
constexpr uint32_t kTileFlagFlowOut = 1u << 16;
constexpr uint32_t kTileFlagFlowIn = 1u << 17;
constexpr uint8_t kTileKindSummary = 0x80;
constexpr size_t kHeaderBytes = 64;

size_t Pad8(size_t n) { return (n + 7) & ~size_t{7}; }

class Writer {
 public:
  explicit Writer(std::string* out) : out_(out) {}
  template <typename T>
  void Put(T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));  // the build targets little-endian machines
    out_->append(b, sizeof(T));
  }
  void Align() { out_->resize(Pad8(out_->size()), '\0'); }

 private:
  std::string* out_;
};

static_assert(std::endian::native == std::endian::little, "tile answers are little-endian");

class Reader {
 public:
  explicit Reader(std::string_view b) : b_(b) {}
  template <typename T>
  bool Get(T* v) {
    if (pos_ + sizeof(T) > b_.size()) return false;
    std::memcpy(v, b_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  bool Skip(size_t n) {
    if (pos_ + n > b_.size()) return false;
    pos_ += n;
    return true;
  }
  bool Align() { return Skip(Pad8(pos_) - pos_); }
  bool Bytes(size_t n, std::string* s) {
    if (pos_ + n > b_.size()) return false;
    s->assign(b_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  size_t pos() const { return pos_; }
  size_t size() const { return b_.size(); }

 private:
  std::string_view b_;
  size_t pos_ = 0;
};

// FNV-1a 64: stable across processes and builds (absl::Hash is seeded).
uint64_t Fnv(std::string_view s, uint64_t h = 14695981039346656037ull) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

WindowRequest TileWindow(const Table& table, const TileRequest& request) {
  WindowRequest w;
  w.start = table.meta().min_ts() + request.k * TileWidth(request.level);
  w.end = w.start + TileWidth(request.level) - 1;
  w.resolution = TileResolution(request.level);
  w.tracks = request.tracks;
  return w;
}

absl::StatusOr<WindowResult> QueryTile(const Table& table, const TileRequest& request) {
  if (request.level < 0 || request.level > kMaxTileLevel) {
    return absl::InvalidArgumentError(absl::StrCat("level must be 0..", kMaxTileLevel));
  }
  const int64_t span = table.meta().max_end() - table.meta().min_ts();
  if (request.k < 0 || request.k > span / TileWidth(request.level)) {
    return absl::OutOfRangeError(absl::StrCat("tile ", request.k, " is outside the table (0..",
                                              span / TileWidth(request.level), ")"));
  }
  if (request.version != kTileVersion && request.version != kTileCompactVersion) {
    return absl::InvalidArgumentError(absl::StrCat("layout version must be ", kTileVersion, " or ",
                                                   kTileCompactVersion));
  }
  if (request.tracks.empty() || request.tracks.size() > kMaxTileTracks) {
    return absl::InvalidArgumentError(absl::StrCat("a tile holds 1..", kMaxTileTracks, " tracks"));
  }
  return QueryWindow(table, TileWindow(table, request));
}

std::string TileETag(const Table& table, const TileRequest& request) {
  std::vector<uint32_t> tracks = request.tracks;
  std::sort(tracks.begin(), tracks.end());
  std::string key = absl::StrCat(table.identity(), "\n", request.version, "\n", request.level, "\n",
                                 request.k, "\n");
  for (uint32_t t : tracks) absl::StrAppend(&key, t, ",");
  // Two independent 64-bit hashes: 128 bits make a collision between two
  // requests of any table as unlikely as a random table id clash.
  return absl::StrCat("\"t", absl::Hex(Fnv(key), absl::kZeroPad16),
                      absl::Hex(Fnv(key, Fnv(key)), absl::kZeroPad16), "\"");
}

absl::StatusOr<std::string> EncodeTileAnswer(const Table& table, const TileRequest& request,
                                             const WindowResult& result) {
  const std::vector<WindowItem>& items = result.items;
  const int64_t tile_start = TileWindow(table, request).start;
  // Tracks in the order the items come (QueryWindow sorts by track).
  std::vector<uint32_t> track_ids, track_counts;
  for (const WindowItem& i : items) {
    if (track_ids.empty() || track_ids.back() != i.track) {
      if (!track_ids.empty() && i.track < track_ids.back()) {
        return absl::InternalError("tile items are not grouped by track");
      }
      track_ids.push_back(i.track);
      track_counts.push_back(0);
    }
    ++track_counts.back();
  }
  std::vector<uint32_t> string_ids;
  auto flow_of = [](const TileRow& r) { return r.flow_id ? r.flow_id : r.flow_out ? r.flow_out : r.flow_in; };
  for (const WindowItem& i : items) {
    for (uint32_t s : {i.row.name, i.row.cat, flow_of(i.row)}) {
      if (s != 0) string_ids.push_back(s);
    }
  }
  std::sort(string_ids.begin(), string_ids.end());
  string_ids.erase(std::unique(string_ids.begin(), string_ids.end()), string_ids.end());
  // Numeric flow ids (format/flow_id.h) sort last and are sent as texts too.
  std::deque<std::string> numbers;
  std::vector<std::string_view> texts(string_ids.size());
  size_t string_bytes = 0;
  for (size_t k = 0; k < string_ids.size(); ++k) {
    texts[k] = IsNumericFlowId(string_ids[k]) ? numbers.emplace_back(NumericFlowIdText(string_ids[k]))
                                              : table.String(string_ids[k]);
    string_bytes += texts[k].size();
  }
  if (items.size() > std::numeric_limits<uint32_t>::max() ||
      string_bytes > std::numeric_limits<uint32_t>::max()) {
    return absl::ResourceExhaustedError("tile too large for its columns");
  }

  std::string out;
  const size_t n = items.size();
  out.reserve(kHeaderBytes + 16 * track_ids.size() + n * 80 + 8 * string_ids.size() + string_bytes + 32);
  Writer w(&out);
  w.Put<uint32_t>(kTileMagic);
  w.Put<uint32_t>(kTileVersion);
  w.Put<int64_t>(tile_start - table.meta().min_ts());
  w.Put<int64_t>(TileWidth(request.level));
  w.Put<int64_t>(TileResolution(request.level));
  w.Put<int64_t>(result.bin);
  w.Put<uint32_t>(static_cast<uint32_t>(request.level));
  w.Put<uint32_t>(static_cast<uint32_t>(track_ids.size()));
  w.Put<uint32_t>(static_cast<uint32_t>(n));
  w.Put<uint32_t>(static_cast<uint32_t>(string_ids.size()));
  w.Put<uint32_t>(static_cast<uint32_t>(string_bytes));
  w.Put<uint32_t>(0);
  for (uint32_t t : track_ids) w.Put(t);
  for (uint32_t c : track_counts) w.Put(c);
  w.Align();
  for (const WindowItem& i : items) w.Put<int64_t>(i.row.ts - tile_start);
  for (const WindowItem& i : items) w.Put<int64_t>(i.row.dur);
  for (const WindowItem& i : items) w.Put<uint64_t>(i.row.id);
  for (const WindowItem& i : items) w.Put<double>(i.row.value);
  for (const WindowItem& i : items) w.Put<uint64_t>(i.row.covered);
  for (const WindowItem& i : items) w.Put<int64_t>(i.row.longest_dur);
  for (const WindowItem& i : items) w.Put<uint32_t>(i.row.name);
  for (const WindowItem& i : items) w.Put<uint32_t>(i.row.cat);
  for (const WindowItem& i : items) w.Put<uint32_t>(i.row.lane);
  for (const WindowItem& i : items) {
    if (i.row.count > std::numeric_limits<uint32_t>::max()) {
      return absl::OutOfRangeError("a summary count does not fit 32 bits");
    }
    w.Put<uint32_t>(static_cast<uint32_t>(i.row.count));
  }
  for (const WindowItem& i : items) {
    // One flow column: a slice in the middle of a chain bound by one id
    // (flow_in == flow_out) carries both flags; under two different ids only
    // flow_out fits (docs/api.md).
    const bool in = i.row.flow_in && (!i.row.flow_out || i.row.flow_in == i.row.flow_out);
    const uint32_t f = (i.row.flags & 0xffff) | (i.row.flow_out ? kTileFlagFlowOut : 0) | (in ? kTileFlagFlowIn : 0);
    w.Put<uint32_t>(f);
  }
  for (const WindowItem& i : items) w.Put<uint32_t>(flow_of(i.row));
  for (const WindowItem& i : items) {
    w.Put<uint8_t>(static_cast<uint8_t>(i.row.kind) | (i.summary ? kTileKindSummary : 0));
  }
  w.Align();
  for (uint32_t s : string_ids) w.Put(s);
  for (std::string_view text : texts) w.Put(static_cast<uint32_t>(text.size()));
  for (std::string_view text : texts) out.append(text);
  w.Align();
  if (request.version == kTileCompactVersion) return PackTileAnswer(out);
  return out;
}

absl::StatusOr<DecodedTile> DecodeTileAnswer(std::string_view bytes) {
  if (bytes.size() >= 8 && static_cast<uint8_t>(bytes[4]) == kTileCompactVersion) {
    absl::StatusOr<std::string> v1 = UnpackTileAnswer(bytes);
    if (!v1.ok()) return v1.status();
    return DecodeTileAnswer(*v1);
  }
  auto bad = [](std::string_view what) {
    return absl::DataLossError(absl::StrCat("damaged tile answer: ", Av(what)));
  };
  Reader r(bytes);
  uint32_t magic = 0, version = 0, level = 0, tracks = 0, n = 0, m = 0, sbytes = 0, reserved = 0;
  DecodedTile t;
  if (!r.Get(&magic) || !r.Get(&version) || !r.Get(&t.start) || !r.Get(&t.width) ||
      !r.Get(&t.resolution) || !r.Get(&t.bin) || !r.Get(&level) || !r.Get(&tracks) ||
      !r.Get(&n) || !r.Get(&m) || !r.Get(&sbytes) || !r.Get(&reserved)) {
    return bad("short header");
  }
  if (magic != kTileMagic) return bad("magic");
  if (version != kTileVersion) return bad(absl::StrCat("version ", version));
  t.level = static_cast<int>(level);
  // The sizes the counts imply, before allocating for them.
  const uint64_t need = kHeaderBytes + Pad8(8ull * tracks) + 48ull * n + Pad8(25ull * n) +
                        Pad8(8ull * m + sbytes);
  if (need != bytes.size()) return bad(absl::StrCat("size ", bytes.size(), ", counts say ", need));
  std::vector<uint32_t> ids(tracks), counts(tracks);
  for (auto& v : ids) r.Get(&v);
  uint64_t total = 0;
  for (auto& v : counts) {
    r.Get(&v);
    total += v;
  }
  if (total != n) return bad("track counts do not add up to the items");
  r.Align();
  t.items.resize(n);
  size_t at = 0;
  for (uint32_t k = 0; k < tracks; ++k) {
    for (uint32_t j = 0; j < counts[k]; ++j) t.items[at++].track = ids[k];
  }
  for (auto& i : t.items) {
    r.Get(&i.row.ts);
    i.row.ts += t.start;
  }
  for (auto& i : t.items) r.Get(&i.row.dur);
  for (auto& i : t.items) r.Get(&i.row.id);
  for (auto& i : t.items) r.Get(&i.row.value);
  for (auto& i : t.items) r.Get(&i.row.covered);
  for (auto& i : t.items) r.Get(&i.row.longest_dur);
  for (auto& i : t.items) r.Get(&i.row.name);
  for (auto& i : t.items) r.Get(&i.row.cat);
  for (auto& i : t.items) r.Get(&i.row.lane);
  uint32_t u = 0;
  for (auto& i : t.items) { r.Get(&u); i.row.count = u; }
  std::vector<uint32_t> flag_words(n), flows(n);
  for (size_t k = 0; k < n; ++k) {
    r.Get(&flag_words[k]);
    t.items[k].row.flags = flag_words[k] & 0xffff;
  }
  for (auto& f : flows) r.Get(&f);
  for (size_t k = 0; k < n; ++k) {
    uint8_t kind = 0;
    r.Get(&kind);
    WindowItem& i = t.items[k];
    i.summary = (kind & kTileKindSummary) != 0;
    i.row.kind = static_cast<EventKind>(kind & ~kTileKindSummary);
    if (flag_words[k] & kTileFlagFlowOut) {
      i.row.flow_out = flows[k];
      if (flag_words[k] & kTileFlagFlowIn) i.row.flow_in = flows[k];
    } else if (flag_words[k] & kTileFlagFlowIn) {
      i.row.flow_in = flows[k];
    } else {
      i.row.flow_id = flows[k];
    }
  }
  r.Align();
  std::vector<uint32_t> sids(m), lens(m);
  for (auto& v : sids) r.Get(&v);
  uint64_t len_total = 0;
  for (auto& v : lens) {
    r.Get(&v);
    len_total += v;
  }
  if (len_total != sbytes) return bad("string lengths do not add up");
  for (uint32_t k = 0; k < m; ++k) {
    std::string s;
    r.Bytes(lens[k], &s);
    t.strings.emplace_back(sids[k], std::move(s));
  }
  return t;
}

}  // namespace tracetable
