#include "store/run_view_coarse.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "format/absl_compat.h"
#include "format/levels.h"
#include "format/varint.h"
#include "leveldb/iterator.h"

namespace tracetable {
namespace {

struct RawTile {
  uint64_t start;
  std::string value;
};

absl::Status Damaged(const Table& t, std::string_view why) {
  return absl::DataLossError(absl::StrCat(t.path(), ": corrupt table: ", Av(why)));
}

// Every tile of (track, section, level) as the shard stores it, each decoded
// once so that a damaged one is an error here rather than in the view.
absl::Status RawSection(const Table& t, uint32_t track, TileSection section, int level, std::vector<RawTile>* out,
                        std::vector<uint64_t>* thread_time_ids) {
  std::unique_ptr<leveldb::Iterator> it = t.NewIterator();
  it->Seek(EncodeTileKey(TileKey{track, section, static_cast<uint8_t>(level), 0}));
  std::vector<TileRow> scratch;
  for (; it->Valid(); it->Next()) {
    TileKey k;
    const std::string_view key(it->key().data(), it->key().size());
    if (!DecodeTileKey(key, &k) || k.track != track || k.section != section || k.level != level) break;
    RawTile r{k.start, std::string(it->value().data(), it->value().size())};
    scratch.clear();
    if (absl::Status s = DecodeTile(r.value, t.TileStart(k), &scratch); !s.ok()) {
      return Damaged(t, absl::StrCat("tile of track ", track, " level ", level, ": ", s.message()));
    }
    for (const TileRow& row : scratch) {
      if (section == TileSection::kEvents && row.count == 1 && (row.flags & kFlagHasThreadTime)) {
        thread_time_ids->push_back(row.id);
      }
    }
    out->push_back(std::move(r));
  }
  if (!it->status().ok()) return Damaged(t, it->status().ToString());
  return absl::OkStatus();
}

absl::Status Corrupt(std::string_view why) {
  return absl::DataLossError(absl::StrCat("corrupt run view: coarse tiles: ", Av(why)));
}

}  // namespace

absl::StatusOr<std::string> CollectCoarseTiles(const Table& shard, size_t budget) {
  const int num_levels = static_cast<int>(shard.meta().num_levels());
  const int tracks = shard.resources().tracks_size();
  std::string sections;  // the section records of the levels kept so far
  std::vector<uint64_t> thread_time_ids;
  uint64_t count = 0;
  size_t used = 0;
  int from = 0;
  // Coarsest first: a level is kept only with every level above it.
  for (int level = num_levels - 1; level >= 1; --level) {
    std::string records;
    std::vector<uint64_t> ids;
    uint64_t n = 0;
    size_t bytes = 0;
    for (int t = 0; t < tracks; ++t) {
      for (TileSection section : {TileSection::kSummaries, TileSection::kEvents}) {
        if (section == TileSection::kSummaries && !HasSummaryTiles(level)) continue;
        std::vector<RawTile> tiles;
        if (absl::Status s = RawSection(shard, static_cast<uint32_t>(t), section, level, &tiles, &ids); !s.ok()) {
          return s;
        }
        if (tiles.empty()) continue;
        AppendVarint(&records, static_cast<uint64_t>(t));
        records.push_back(static_cast<char>(section));
        AppendVarint(&records, static_cast<uint64_t>(level));
        AppendVarint(&records, tiles.size());
        for (const RawTile& r : tiles) {
          AppendVarint(&records, r.start);
          AppendLengthPrefixed(&records, r.value);
          bytes += r.value.size();
        }
        ++n;
      }
    }
    bytes += ids.size() * 8;  // about a thread time's record
    if (used + bytes > budget) break;
    used += bytes;
    sections += records;
    thread_time_ids.insert(thread_time_ids.end(), ids.begin(), ids.end());
    count += n;
    from = level;
  }
  if (from == 0) return std::string();
  std::string out;
  AppendVarint(&out, static_cast<uint64_t>(from));
  AppendVarint(&out, count);
  out += sections;
  // The thread times of the events kept, by local id.
  std::sort(thread_time_ids.begin(), thread_time_ids.end());
  thread_time_ids.erase(std::unique(thread_time_ids.begin(), thread_time_ids.end()), thread_time_ids.end());
  AppendVarint(&out, thread_time_ids.size());
  for (uint64_t id : thread_time_ids) {
    absl::StatusOr<ThreadTimeEntry> e = shard.ThreadTime(id);
    if (!e.ok()) {
      // Its row says it has one: not finding it is damage.
      return absl::IsNotFound(e.status()) ? Damaged(shard, absl::StrCat("event ", id, " has no thread time"))
                                          : e.status();
    }
    AppendVarint(&out, id);
    out.push_back(static_cast<char>((e->tts ? 1 : 0) | (e->tdur ? 2 : 0)));
    if (e->tts) AppendVarint(&out, ZigZag(*e->tts));
    if (e->tdur) AppendVarint(&out, ZigZag(*e->tdur));
  }
  return out;
}

absl::StatusOr<std::shared_ptr<const CoarseTiles>> ParseCoarseTiles(std::string bytes, const proto::TableMeta& meta,
                                                                     const proto::ResourceTable& resources) {
  if (bytes.empty()) return std::shared_ptr<const CoarseTiles>();
  auto c = std::make_shared<CoarseTiles>();
  c->bytes_ = std::move(bytes);
  const std::string_view s = c->bytes_;
  size_t pos = 0;
  uint64_t from = 0, count = 0;
  c->num_levels_ = static_cast<int>(meta.num_levels());
  if (!ReadVarint(s, &pos, &from) || !ReadVarint(s, &pos, &count) || from < 1 ||
      from >= static_cast<uint64_t>(c->num_levels_) || count > s.size()) {
    return Corrupt("bad header");
  }
  c->from_level_ = static_cast<int>(from);
  c->sections_.reserve(count);
  for (uint64_t k = 0; k < count; ++k) {
    uint64_t track = 0, level = 0, tiles = 0;
    if (!ReadVarint(s, &pos, &track) || pos >= s.size()) return Corrupt("cut short");
    const auto section = static_cast<TileSection>(s[pos++]);
    if (!ReadVarint(s, &pos, &level) || !ReadVarint(s, &pos, &tiles) || tiles == 0 || tiles > s.size()) {
      return Corrupt("cut short");
    }
    if (track >= static_cast<uint64_t>(resources.tracks_size()) ||
        (section != TileSection::kEvents && section != TileSection::kSummaries) || level < from ||
        level >= static_cast<uint64_t>(c->num_levels_)) {
      return Corrupt("a section outside the shard's tracks or the recorded levels");
    }
    auto [it, fresh] = c->sections_.try_emplace(
        CoarseTiles::Key(static_cast<uint32_t>(track), section, static_cast<int>(level)));
    if (!fresh) return Corrupt("a section recorded twice");
    it->second.reserve(tiles);
    for (uint64_t i = 0; i < tiles; ++i) {
      uint64_t start = 0, size = 0;
      if (!ReadVarint(s, &pos, &start) || !ReadVarint(s, &pos, &size) || size > s.size() - pos) {
        return Corrupt("cut short");
      }
      // Table::ReadTiles relies on key order: starts strictly increase.
      if (!it->second.empty() && start <= it->second.back().start) return Corrupt("tiles out of order");
      it->second.push_back(CoarseTiles::Tile{start, pos, static_cast<size_t>(size)});
      pos += size;
    }
  }
  uint64_t thread_times = 0, last = 0;
  if (!ReadVarint(s, &pos, &thread_times) || thread_times > s.size()) return Corrupt("cut short");
  c->thread_times_.reserve(thread_times);
  for (uint64_t k = 0; k < thread_times; ++k) {
    uint64_t id = 0, tts = 0, tdur = 0;
    if (!ReadVarint(s, &pos, &id) || pos >= s.size() || (k > 0 && id <= last) || id == 0) {
      return Corrupt("thread times cut short or out of order");
    }
    last = id;
    const uint8_t has = static_cast<uint8_t>(s[pos++]);
    if (has > 3 || ((has & 1) && !ReadVarint(s, &pos, &tts)) || ((has & 2) && !ReadVarint(s, &pos, &tdur))) {
      return Corrupt("a thread time does not parse");
    }
    ThreadTimeEntry& e = c->thread_times_[id];
    if (has & 1) e.tts = UnZigZag(tts);
    if (has & 2) e.tdur = UnZigZag(tdur);
  }
  if (pos != s.size()) return Corrupt("bytes after the last thread time");
  return std::shared_ptr<const CoarseTiles>(std::move(c));
}

absl::Status CoarseTiles::Read(uint32_t track, TileSection section, int level, int64_t from, int64_t to,
                               int64_t min_ts, std::vector<TileRow>* rows, ReadStats* stats) const {
  if (to < from) return absl::OkStatus();
  auto it = sections_.find(Key(track, section, level));
  if (it == sections_.end()) return absl::OkStatus();
  const std::vector<Tile>& tiles = it->second;
  // Table::ReadTiles: the tiles starting in [from, to] and the one before.
  auto offset = [min_ts](int64_t t) { return t <= min_ts ? uint64_t{0} : static_cast<uint64_t>(t - min_ts); };
  const uint64_t lo = offset(from), hi = offset(to);
  size_t k = static_cast<size_t>(
      std::lower_bound(tiles.begin(), tiles.end(), lo, [](const Tile& t, uint64_t v) { return t.start < v; }) -
      tiles.begin());
  if (k > 0) --k;
  for (; k < tiles.size() && tiles[k].start <= hi; ++k) {
    const std::string_view v = std::string_view(bytes_).substr(tiles[k].at, tiles[k].size);
    if (stats) {
      ++stats->tiles;
      stats->bytes += v.size();
    }
    if (absl::Status s = DecodeTile(v, min_ts + static_cast<int64_t>(tiles[k].start), rows); !s.ok()) {
      return Corrupt(absl::StrCat("tile of track ", track, " level ", level, ": ", s.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace tracetable
