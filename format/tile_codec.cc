#include "format/tile_codec.h"

#include <algorithm>
#include <numeric>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "format/tracetable.pb.h"

namespace tracetable {
namespace {

// Fills `column` only if some row differs from the default.
template <typename Column, typename Get>
void PutColumn(const std::vector<TileRow>& rows, Column* column, Get get) {
  bool any = false;
  for (const TileRow& r : rows) {
    if (get(r) != decltype(get(r)){}) {
      any = true;
      break;
    }
  }
  if (!any) return;
  column->Reserve(static_cast<int>(rows.size()));
  for (const TileRow& r : rows) column->Add(get(r));
}

constexpr size_t kMaxSmallValues = 16;

int IndexWidth(size_t values) {
  int w = 0;
  while ((size_t{1} << w) < values) ++w;
  return w;
}

// Stores a uint32 column in small() when it has few distinct values (an
// index of at most 4 bits a row instead of a varint of at least 8), else in
// `plain`; a column of defaults only is left empty.
template <typename Small, typename Get>
void PutUint32Column(const std::vector<TileRow>& rows, google::protobuf::RepeatedField<uint32_t>* plain,
                     Small small_column, Get get) {
  uint32_t values[kMaxSmallValues];
  size_t n = 0;
  bool any = false;
  std::vector<uint8_t> indexes(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const uint32_t v = get(rows[i]);
    any |= v != 0;
    if (n > kMaxSmallValues) continue;
    const size_t at = std::find(values, values + n, v) - values;
    if (at == n) {
      if (n < kMaxSmallValues) values[n] = v;
      ++n;
    }
    indexes[i] = static_cast<uint8_t>(at);
  }
  if (!any) return;
  if (n > kMaxSmallValues) {
    plain->Reserve(static_cast<int>(rows.size()));
    for (const TileRow& r : rows) plain->Add(get(r));
    return;
  }
  proto::SmallColumn* small = small_column();
  for (size_t i = 0; i < n; ++i) small->add_values(values[i]);
  const int width = IndexWidth(n);
  if (width == 0) return;
  std::string index((rows.size() * width + 7) / 8, '\0');
  size_t bit = 0;
  for (const uint8_t idx : indexes) {
    for (int b = 0; b < width; ++b, ++bit) {
      if (idx & (1u << b)) index[bit / 8] = static_cast<char>(index[bit / 8] | (1u << (bit % 8)));
    }
  }
  small->set_index(std::move(index));
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
  auto fold = [&unit](int64_t v) { unit = std::gcd(unit, static_cast<uint64_t>(v < 0 ? -v : v)); };
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
  proto::Tile tile;
  const uint64_t unit_u = TimeUnit(rows, tile_start, summary);
  const int64_t unit = static_cast<int64_t>(unit_u);
  if (unit > 1) tile.set_time_unit(unit_u);
  tile.mutable_ts_delta()->Reserve(static_cast<int>(rows.size()));
  int64_t prev_ts = tile_start;
  uint64_t prev_id = 0;
  for (const TileRow& r : rows) {
    tile.add_ts_delta((r.ts - prev_ts) / unit);
    prev_ts = r.ts;
  }
  // Summary rows have no id: they take delta 0 and do not move the base, so
  // ids of the events around them stay small deltas.
  bool any_id = false;
  for (const TileRow& r : rows) any_id |= (r.id != 0);
  if (any_id) {
    for (const TileRow& r : rows) {
      if (r.count > 1) {
        tile.add_id_delta(0);
        continue;
      }
      tile.add_id_delta(static_cast<int64_t>(r.id - prev_id));
      prev_id = r.id;
    }
  }
  PutColumn(rows, tile.mutable_dur(), [unit](const TileRow& r) { return static_cast<uint64_t>(r.dur / unit); });
  PutColumn(rows, tile.mutable_name(), [](const TileRow& r) { return r.name; });
  PutUint32Column(rows, tile.mutable_cat(), [&] { return tile.mutable_cat_small(); },
                  [](const TileRow& r) { return r.cat; });
  PutUint32Column(rows, tile.mutable_lane(), [&] { return tile.mutable_lane_small(); },
                  [](const TileRow& r) { return r.lane; });
  PutUint32Column(rows, tile.mutable_kind(), [&] { return tile.mutable_kind_small(); },
                  [](const TileRow& r) { return static_cast<uint32_t>(r.kind); });
  PutUint32Column(rows, tile.mutable_flags(), [&] { return tile.mutable_flags_small(); },
                  [](const TileRow& r) { return r.flags; });
  PutColumn(rows, tile.mutable_flow_id(), [](const TileRow& r) { return r.flow_id; });
  PutColumn(rows, tile.mutable_flow_out(), [](const TileRow& r) { return r.flow_out; });
  PutColumn(rows, tile.mutable_flow_in(), [](const TileRow& r) { return r.flow_in; });
  PutColumn(rows, tile.mutable_value(), [](const TileRow& r) { return r.value; });
  if (summary) {
    PutColumn(rows, tile.mutable_count(), [](const TileRow& r) { return r.count; });
    // For a single event both equal its duration; only summaries store them.
    PutColumn(rows, tile.mutable_covered(),
              [unit_u](const TileRow& r) { return r.count > 1 ? r.covered / unit_u : uint64_t{0}; });
    PutColumn(rows, tile.mutable_longest_dur(), [unit](const TileRow& r) {
      return r.count > 1 ? static_cast<uint64_t>(r.longest_dur / unit) : uint64_t{0};
    });
  }
  return tile.SerializeAsString();
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
      !ColumnFits(tile.value(), n) || !ColumnFits(tile.count(), n) ||
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
  const int64_t unit = tile.time_unit() == 0 ? 1 : static_cast<int64_t>(tile.time_unit());
  const size_t base = out->size();
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
