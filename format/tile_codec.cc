#include "format/tile_codec.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numeric>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "format/tracetable.pb.h"
#include "format/varint.h"

namespace tracetable {
namespace {

// Tiles are written straight in the protobuf wire format (a Tile message
// holds every row once more in its columns before it serialises them), in
// the order and form proto::Tile::SerializeAsString uses: fields by number,
// repeated scalars packed, empty fields left out. tile_codec_test checks
// the bytes against the message's own serialisation.
static_assert(std::endian::native == std::endian::little, "doubles are copied to the wire as they are");

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2 };

void PutTag(std::string* out, uint32_t field, WireType type) { AppendVarint(out, (field << 3) | type); }

void PutBytesField(std::string* out, uint32_t field, std::string_view bytes) {
  PutTag(out, field, kLengthDelimited);
  AppendVarint(out, bytes.size());
  out->append(bytes);
}

// Writes a varint at `p` (room for 10 bytes) and returns the end.
char* PutVarint(char* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

// Packs a column's varints into the `scratch` string of the caller's thread
// (it keeps its size from tile to tile, so filling it costs no checks).
template <typename Fill>
std::string_view PackVarints(size_t rows, Fill fill) {
  thread_local std::string scratch;
  const size_t need = rows * 10;
  if (scratch.size() < need) scratch.resize(need);
  char* end = fill(scratch.data());
  return std::string_view(scratch.data(), static_cast<size_t>(end - scratch.data()));
}

// Divides times by the tile's unit. Every time of a tile is an exact
// multiple of it (TimeUnit), so the quotient is the product with the
// inverse of the unit's odd part modulo 2^64 after shifting out its twos: a
// multiply instead of a 64-bit division per time.
class ExactDivider {
 public:
  explicit ExactDivider(uint64_t unit) : shift_(std::countr_zero(unit)) {
    const uint64_t odd = unit >> shift_;
    inverse_ = odd;  // correct to 3 bits; each step doubles them
    for (int i = 0; i < 5; ++i) inverse_ *= 2 - odd * inverse_;
    limit_ = UINT64_MAX / odd;
  }
  int64_t operator()(int64_t v) const { return static_cast<int64_t>(static_cast<uint64_t>(v >> shift_) * inverse_); }
  uint64_t operator()(uint64_t v) const { return (v >> shift_) * inverse_; }
  // Whether `unit` divides v, also without a division: v's low `shift`
  // bits are zero, and the product of the rest with the inverse is at most
  // (2^64 - 1) / odd exactly when odd divides the rest.
  bool Divides(uint64_t v) const {
    return (v & ((uint64_t{1} << shift_) - 1)) == 0 && (v >> shift_) * inverse_ <= limit_;
  }

 private:
  int shift_;
  uint64_t inverse_;
  uint64_t limit_ = UINT64_MAX;  // for Divides
};

// Integers up to 2^53 are exact as doubles, and so as int64 and back.
constexpr int64_t kMaxExactInteger = int64_t{1} << 53;
bool IsExactInteger(double v) {
  return v >= -static_cast<double>(kMaxExactInteger) && v <= static_cast<double>(kMaxExactInteger) &&
         v == std::trunc(v) && !(v == 0 && std::signbit(v));
}

// A packed varint column; `any`: some value is not 0, else it is left out.
template <typename Get>
void PutVarintColumn(std::string* out, uint32_t field, bool any, const std::vector<TileRow>& rows, Get get) {
  if (!any) return;
  PutBytesField(out, field, PackVarints(rows.size(), [&](char* p) {
                  for (const TileRow& r : rows) p = PutVarint(p, get(r));
                  return p;
                }));
}

constexpr size_t kMaxSmallValues = 16;

int IndexWidth(size_t values) {
  int w = 0;
  while ((size_t{1} << w) < values) ++w;
  return w;
}

// How a uint32 column is stored: left out (all zero), as a SmallColumn when
// it has few distinct values (an index of at most 4 bits a row instead of a
// varint of at least 8), else packed.
struct Uint32Column {
  bool any = false;
  bool small = false;
  uint32_t values[kMaxSmallValues];
  size_t n = 0;
  std::vector<uint8_t> indexes;
};

// Adds row i's value v to column c (prev: row i - 1's value).
inline void ShapeStep(Uint32Column* c, size_t i, uint32_t v, uint32_t prev) {
  c->any |= v != 0;
  if (c->n > kMaxSmallValues) return;
  // Neighbouring rows mostly share the value (one category, one kind).
  if (i > 0 && v == prev) {
    c->indexes[i] = c->indexes[i - 1];
    return;
  }
  const size_t at = std::find(c->values, c->values + c->n, v) - c->values;
  if (at == c->n) {
    if (c->n < kMaxSmallValues) c->values[c->n] = v;
    ++c->n;
  }
  c->indexes[i] = static_cast<uint8_t>(at);
}

void StartColumn(Uint32Column* c, size_t rows) {
  c->any = false;
  c->n = 0;
  c->indexes.resize(rows);
}

// Which of the other columns have a value that is not 0 (an empty column is
// left out of the tile).
struct NonZero {
  bool dur, name, id, flow_id, flow_out, flow_in, value;
};

// One pass over the rows for what every column needs to know before it is
// written: the four uint32 columns' shapes, and which others are all 0 (a
// pass per column was a third of EncodeTile's samples).
NonZero ScanRows(const std::vector<TileRow>& rows, Uint32Column* cat, Uint32Column* lane,
                 Uint32Column* kind, Uint32Column* flags) {
  for (Uint32Column* c : {cat, lane, kind, flags}) StartColumn(c, rows.size());
  uint64_t dur = 0, id = 0;
  uint32_t name = 0, flow_id = 0, flow_out = 0, flow_in = 0;
  bool value = false;
  for (size_t i = 0; i < rows.size(); ++i) {
    const TileRow& r = rows[i];
    const TileRow& prev = rows[i > 0 ? i - 1 : 0];  // read only when i > 0
    dur |= static_cast<uint64_t>(r.dur);
    name |= r.name;
    id |= r.id;
    flow_id |= r.flow_id;
    flow_out |= r.flow_out;
    flow_in |= r.flow_in;
    value |= r.value != 0;
    ShapeStep(cat, i, r.cat, prev.cat);
    ShapeStep(lane, i, r.lane, prev.lane);
    ShapeStep(kind, i, static_cast<uint32_t>(r.kind), static_cast<uint32_t>(prev.kind));
    ShapeStep(flags, i, r.flags, prev.flags);
  }
  for (Uint32Column* c : {cat, lane, kind, flags}) c->small = c->any && c->n <= kMaxSmallValues;
  return NonZero{dur != 0, name != 0, id != 0, flow_id != 0, flow_out != 0, flow_in != 0, value};
}

void PutSmallColumn(std::string* out, uint32_t field, const Uint32Column& c) {
  if (!c.small) return;
  std::string packed;
  for (size_t i = 0; i < c.n; ++i) AppendVarint(&packed, c.values[i]);
  std::string message;
  PutBytesField(&message, 1, packed);
  if (const int width = IndexWidth(c.n); width > 0) {
    // Row i's index at bit i * width, little-endian: bits gather in a word
    // and leave it a byte at a time.
    std::string index;
    index.reserve((c.indexes.size() * width + 7) / 8);
    uint64_t bits = 0;
    int held = 0;
    for (const uint8_t idx : c.indexes) {
      bits |= uint64_t{idx} << held;
      for (held += width; held >= 8; held -= 8, bits >>= 8) index.push_back(static_cast<char>(bits & 0xFF));
    }
    if (held > 0) index.push_back(static_cast<char>(bits & 0xFF));
    PutBytesField(&message, 2, index);
  }
  PutBytesField(out, field, message);
}

template <typename Get>
void PutPlainUint32Column(std::string* out, uint32_t field, const std::vector<TileRow>& rows,
                          const Uint32Column& c, Get get) {
  PutVarintColumn(out, field, c.any && !c.small, rows, get);
}

// The n values of a column stored either way; empty if it was left empty.
absl::Status ExpandUint32Column(const google::protobuf::RepeatedField<uint32_t>& plain, bool has_small,
                                const proto::SmallColumn& small, size_t n,
                                std::vector<uint32_t>* out) {
  out->clear();
  if (!plain.empty()) {
    if (has_small || static_cast<size_t>(plain.size()) != n) {
      return absl::DataLossError(absl::StrCat("tile columns disagree in length (", n, " rows)"));
    }
    out->assign(plain.begin(), plain.end());
    return absl::OkStatus();
  }
  if (!has_small) return absl::OkStatus();
  const size_t values = small.values_size();
  const int width = IndexWidth(values);
  if (values == 0 || values > kMaxSmallValues || small.index().size() != (n * width + 7) / 8) {
    return absl::DataLossError("tile has a malformed small column");
  }
  out->resize(n);
  const std::string& index = small.index();
  size_t bit = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t idx = 0;
    for (int b = 0; b < width; ++b, ++bit) {
      idx |= ((static_cast<uint8_t>(index[bit / 8]) >> (bit % 8)) & 1u) << b;
    }
    if (idx >= values) return absl::DataLossError("tile has a malformed small column");
    (*out)[i] = small.values(static_cast<int>(idx));
  }
  return absl::OkStatus();
}

template <typename Column>
bool ColumnFits(const Column& column, size_t n) {
  return column.empty() || static_cast<size_t>(column.size()) == n;
}

// The largest unit every time of the tile is a whole multiple of: traces
// are mostly in whole ns or us, so times shrink by 3 to 6 decimal digits.
uint64_t TimeUnit(const std::vector<TileRow>& rows, int64_t tile_start, bool summary) {
  uint64_t unit = 0;
  ExactDivider divides(1);
  auto fold = [&](int64_t v) {
    const uint64_t a = static_cast<uint64_t>(v < 0 ? -v : v);
    // Most times are whole multiples of the unit so far: a test with two
    // multiplies (a 64-bit division per time was 14% of EncodeTile's
    // samples), a gcd only when the unit shrinks.
    if (unit != 0 && divides.Divides(a)) return;
    unit = std::gcd(unit, a);
    if (unit != 0) divides = ExactDivider(unit);
  };
  for (const TileRow& r : rows) {
    fold(r.ts - tile_start);
    fold(r.dur);
    if (summary && r.count > 1) {
      fold(static_cast<int64_t>(r.covered));
      fold(r.longest_dur);
    }
    if (unit == 1) break;
  }
  return unit == 0 ? 1 : unit;
}

}  // namespace

void FoldSummary(TileRow* agg, const TileRow& item) {
  const int64_t end = std::max(agg->ts + agg->dur, item.ts + item.dur);
  agg->ts = std::min(agg->ts, item.ts);
  agg->dur = end - agg->ts;
  agg->count += item.count;
  agg->covered += item.covered;
  if (item.longest_dur > agg->longest_dur) {
    agg->longest_dur = item.longest_dur;
    agg->name = item.name;
  }
  agg->id = agg->cat = agg->flags = agg->flow_id = agg->flow_out = agg->flow_in = 0;
  agg->value = 0;
}

std::string EncodeTile(const std::vector<TileRow>& rows, int64_t tile_start,
                       bool summary) {
  const uint64_t unit = TimeUnit(rows, tile_start, summary);
  const ExactDivider in_units(unit);
  std::string out;
  out.reserve(rows.size() * 8 + 64);
  // Field 1, ts_delta: one per row, from the tile start.
  if (!rows.empty()) {
    PutBytesField(&out, 1, PackVarints(rows.size(), [&](char* p) {
                    int64_t prev_ts = tile_start;
                    for (const TileRow& r : rows) {
                      p = PutVarint(p, ZigZag(in_units(r.ts - prev_ts)));
                      prev_ts = r.ts;
                    }
                    return p;
                  }));
  }
  thread_local Uint32Column cat, lane, kind, flags;
  const NonZero non_zero = ScanRows(rows, &cat, &lane, &kind, &flags);
  // Times are exact multiples of the unit: 0 stays 0 in units.
  PutVarintColumn(&out, 2, non_zero.dur, rows, [&](const TileRow& r) { return in_units(static_cast<uint64_t>(r.dur)); });
  PutVarintColumn(&out, 3, non_zero.name, rows, [](const TileRow& r) { return r.name; });
  PutPlainUint32Column(&out, 4, rows, cat, [](const TileRow& r) { return r.cat; });
  PutPlainUint32Column(&out, 5, rows, lane, [](const TileRow& r) { return r.lane; });
  // Field 6, id_delta. Summary rows have no id: they take delta 0 and do not
  // move the base, so ids of the events around them stay small deltas.
  if (non_zero.id) {
    PutBytesField(&out, 6, PackVarints(rows.size(), [&](char* p) {
                    uint64_t prev_id = 0;
                    for (const TileRow& r : rows) {
                      if (r.count > 1) {
                        *p++ = 0;
                        continue;
                      }
                      p = PutVarint(p, ZigZag(static_cast<int64_t>(r.id - prev_id)));
                      prev_id = r.id;
                    }
                    return p;
                  }));
  }
  PutPlainUint32Column(&out, 7, rows, kind, [](const TileRow& r) { return static_cast<uint32_t>(r.kind); });
  PutPlainUint32Column(&out, 8, rows, flags, [](const TileRow& r) { return r.flags; });
  PutVarintColumn(&out, 9, non_zero.flow_id, rows, [](const TileRow& r) { return r.flow_id; });
  PutVarintColumn(&out, 10, non_zero.flow_out, rows, [](const TileRow& r) { return r.flow_out; });
  PutVarintColumn(&out, 11, non_zero.flow_in, rows, [](const TileRow& r) { return r.flow_in; });
  // Field 12, value: packed little-endian doubles, left out if all are 0;
  // field 21 instead when all are integers.
  const bool int_values = non_zero.value && std::all_of(rows.begin(), rows.end(), [](const TileRow& r) {
                            return IsExactInteger(r.value);
                          });
  if (non_zero.value && !int_values) {
    PutTag(&out, 12, kLengthDelimited);
    AppendVarint(&out, rows.size() * sizeof(double));
    for (const TileRow& r : rows) {
      char bytes[sizeof(double)];
      std::memcpy(bytes, &r.value, sizeof(double));
      out.append(bytes, sizeof(double));
    }
  }
  if (summary) {
    auto any = [&](auto get) { return std::any_of(rows.begin(), rows.end(), [&](const TileRow& r) { return get(r) != 0; }); };
    auto count = [](const TileRow& r) { return r.count; };
    // For a single event both equal its duration; only summaries store them.
    auto covered = [&](const TileRow& r) { return r.count > 1 ? in_units(r.covered) : uint64_t{0}; };
    auto longest = [&](const TileRow& r) {
      return r.count > 1 ? in_units(static_cast<uint64_t>(r.longest_dur)) : uint64_t{0};
    };
    PutVarintColumn(&out, 13, any(count), rows, count);
    PutVarintColumn(&out, 14, any(covered), rows, covered);
    PutVarintColumn(&out, 15, any(longest), rows, longest);
  }
  if (unit > 1) {
    PutTag(&out, 16, kVarint);
    AppendVarint(&out, unit);
  }
  PutSmallColumn(&out, 17, cat);
  PutSmallColumn(&out, 18, lane);
  PutSmallColumn(&out, 19, kind);
  PutSmallColumn(&out, 20, flags);
  if (int_values) {
    PutBytesField(&out, 21, PackVarints(rows.size(), [&](char* p) {
                    int64_t prev = 0;
                    for (const TileRow& r : rows) {
                      const auto v = static_cast<int64_t>(r.value);
                      p = PutVarint(p, ZigZag(v - prev));
                      prev = v;
                    }
                    return p;
                  }));
  }
  return out;
}

absl::Status DecodeTile(std::string_view bytes, int64_t tile_start,
                        std::vector<TileRow>* out) {
  proto::Tile tile;
  if (!tile.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::DataLossError("tile does not parse");
  }
  const size_t n = tile.ts_delta_size();
  if (!ColumnFits(tile.dur(), n) || !ColumnFits(tile.name(), n) ||
      !ColumnFits(tile.id_delta(), n) || !ColumnFits(tile.flow_id(), n) ||
      !ColumnFits(tile.flow_out(), n) || !ColumnFits(tile.flow_in(), n) ||
      !ColumnFits(tile.value(), n) || !ColumnFits(tile.value_delta(), n) || !ColumnFits(tile.count(), n) ||
      !ColumnFits(tile.covered(), n) || !ColumnFits(tile.longest_dur(), n)) {
    return absl::DataLossError(absl::StrCat("tile columns disagree in length (", n, " rows)"));
  }
  std::vector<uint32_t> cat, lane, kind, flags;
  for (auto [plain, has, small, col] :
       {std::tuple(&tile.cat(), tile.has_cat_small(), &tile.cat_small(), &cat),
        std::tuple(&tile.lane(), tile.has_lane_small(), &tile.lane_small(), &lane),
        std::tuple(&tile.kind(), tile.has_kind_small(), &tile.kind_small(), &kind),
        std::tuple(&tile.flags(), tile.has_flags_small(), &tile.flags_small(), &flags)}) {
    if (absl::Status s = ExpandUint32Column(*plain, has, *small, n, col); !s.ok()) return s;
  }
  if (!tile.value().empty() && !tile.value_delta().empty()) {
    return absl::DataLossError("tile holds counter values twice");
  }
  const int64_t unit = tile.time_unit() == 0 ? 1 : static_cast<int64_t>(tile.time_unit());
  const size_t base = out->size();
  uint64_t int_value = 0;  // wraps like the writer's differences
  out->resize(base + n);
  int64_t ts = tile_start;
  uint64_t id = 0;
  for (size_t i = 0; i < n; ++i) {
    TileRow& r = (*out)[base + i];
    ts += tile.ts_delta(i) * unit;
    r.ts = ts;
    if (!tile.count().empty()) r.count = tile.count(i);
    if (!tile.id_delta().empty() && r.count <= 1) {
      id += static_cast<uint64_t>(tile.id_delta(i));
      r.id = id;
    }
    if (!tile.dur().empty()) r.dur = static_cast<int64_t>(tile.dur(i)) * unit;
    if (!tile.name().empty()) r.name = tile.name(i);
    if (!cat.empty()) r.cat = cat[i];
    if (!lane.empty()) r.lane = lane[i];
    if (!kind.empty()) r.kind = static_cast<EventKind>(kind[i]);
    if (!flags.empty()) r.flags = flags[i];
    if (!tile.flow_id().empty()) r.flow_id = tile.flow_id(i);
    if (!tile.flow_out().empty()) r.flow_out = tile.flow_out(i);
    if (!tile.flow_in().empty()) r.flow_in = tile.flow_in(i);
    if (!tile.value().empty()) r.value = tile.value(i);
    if (!tile.value_delta().empty()) {
      int_value += static_cast<uint64_t>(tile.value_delta(i));
      const auto v = static_cast<int64_t>(int_value);
      if (v > kMaxExactInteger || v < -kMaxExactInteger) return absl::DataLossError("tile has a counter value past 2^53");
      r.value = static_cast<double>(v);
    }
    if (!tile.covered().empty()) r.covered = tile.covered(i) * static_cast<uint64_t>(unit);
    if (!tile.longest_dur().empty()) r.longest_dur = static_cast<int64_t>(tile.longest_dur(i)) * unit;
    if (r.count <= 1) {
      r.covered = static_cast<uint64_t>(r.dur);
      r.longest_dur = r.dur;
    }
  }
  return absl::OkStatus();
}

}  // namespace tracetable
