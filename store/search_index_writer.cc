#include "store/search_index_writer.h"

#include <algorithm>
#include <numeric>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace tracetable {
namespace {

// Own postings per chunk: big enough that LevelDB's per-key cost vanishes
// next to 1-2 byte postings, small enough that a reader seeking into a
// common name decodes little it does not need.
constexpr size_t kChunkPostings = 1024;

}  // namespace

SearchIndexWriter::SearchIndexWriter(std::string spill_prefix, size_t memory_bytes)
    : sorter_(std::make_unique<ExternalSorter<Posting, PostingOrder>>(std::move(spill_prefix), PostingOrder{},
                                                        memory_bytes / sizeof(Posting))) {}

absl::Status SearchIndexWriter::AddTile(const TileKey& key, int64_t tile_start,
                                        const std::vector<TileRow>& rows) {
  absl::flat_hash_set<uint32_t> names;
  int64_t end = tile_start, last = tile_start;
  for (const TileRow& r : rows) {
    if (r.kind == EventKind::kCounter || r.name == 0) continue;
    names.insert(r.name);
    end = std::max(end, r.ts + r.dur);
    last = std::max(last, r.ts);
  }
  if (names.empty()) return absl::OkStatus();
  std::lock_guard<std::mutex> lock(mu_);
  if (tiles_.size() == UINT32_MAX) return absl::ResourceExhaustedError("more than 2^32 tiles to index");
  const uint32_t index = static_cast<uint32_t>(tiles_.size());
  tiles_.push_back(Tile{key.start, static_cast<uint64_t>(end - tile_start),
                        static_cast<uint64_t>(last - tile_start), key.track, key.level});
  for (uint32_t name : names) {
    if (absl::Status s = sorter_->Add(Posting{name, index}); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status SearchIndexWriter::WriteDirectory(const std::vector<uint32_t>& by_rank, const PutFn& put,
                                               proto::SearchIndexInfo* info) {
  constexpr size_t kBlock = size_t{1} << kSearchTilesBlockShift;
  for (size_t first = 0; first < by_rank.size(); first += kBlock) {
    proto::SearchTiles block;
    uint64_t prev = 0;
    for (size_t r = first; r < std::min(by_rank.size(), first + kBlock); ++r) {
      const Tile& t = tiles_[by_rank[r]];
      block.add_start_delta(t.start - prev);
      prev = t.start;
      block.add_track(t.track);
      block.add_level(t.level);
      block.add_reach(t.reach);
      block.add_last(t.last);
    }
    std::string value = block.SerializeAsString();
    info->set_bytes(info->bytes() + value.size());
    if (absl::Status s = put(SearchTilesKey(static_cast<uint32_t>(first >> kSearchTilesBlockShift)),
                             std::move(value));
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status SearchIndexWriter::Finish(size_t read_budget, const PutFn& put,
                                       proto::SearchIndexInfo* info) {
  *info = proto::SearchIndexInfo();
  info->set_postings(sorter_->size());
  info->set_tiles(tiles_.size());
  std::vector<uint32_t> by_rank(tiles_.size());
  std::iota(by_rank.begin(), by_rank.end(), 0u);
  std::sort(by_rank.begin(), by_rank.end(), [&](uint32_t a, uint32_t b) {
    return std::tie(tiles_[a].start, tiles_[a].track, tiles_[a].level) <
           std::tie(tiles_[b].start, tiles_[b].track, tiles_[b].level);
  });
  if (absl::Status s = WriteDirectory(by_rank, put, info); !s.ok()) return s;
  std::vector<uint32_t> rank_of(tiles_.size());
  for (uint32_t r = 0; r < by_rank.size(); ++r) rank_of[by_rank[r]] = r;
  auto start = [&](uint32_t rank) { return tiles_[by_rank[rank]].start; };
  auto end = [&](uint32_t rank) { return tiles_[by_rank[rank]].start + tiles_[by_rank[rank]].reach; };

  // One name's postings as ranks, then its chunks.
  std::vector<uint32_t> ranks;
  uint32_t name = 0;
  auto write_name = [&]() -> absl::Status {
    if (ranks.empty()) return absl::OkStatus();
    std::sort(ranks.begin(), ranks.end());
    std::vector<uint32_t> live;  // the chunk's carried ranks, then its own
    size_t carried = 0;
    auto flush = [&]() -> absl::Status {
      if (live.size() == carried) return absl::OkStatus();
      proto::SearchPostings c;
      c.set_carried(static_cast<uint32_t>(carried));
      uint32_t prev = 0;
      for (uint32_t r : live) {
        c.add_rank_delta(r - prev);
        prev = r;
      }
      std::string value = c.SerializeAsString();
      info->set_chunks(info->chunks() + 1);
      info->set_bytes(info->bytes() + value.size());
      return put(SearchChunkKey(name, live[carried]), std::move(value));
    };
    for (uint32_t r : ranks) {
      // Chunks grow with what they carry, so carried copies stay a minority.
      if (live.size() - carried >= std::max(kChunkPostings, carried)) {
        if (absl::Status s = flush(); !s.ok()) return s;
        live.erase(std::remove_if(live.begin(), live.end(), [&](uint32_t q) { return end(q) < start(r); }),
                   live.end());
        carried = live.size();
      }
      live.push_back(r);
    }
    absl::Status s = flush();
    ranks.clear();
    return s;
  };
  absl::Status st = sorter_->Merge(read_budget, [&](const Posting& p) -> absl::Status {
    if (p.name != name) {
      if (absl::Status s = write_name(); !s.ok()) return s;
      name = p.name;
    }
    ranks.push_back(rank_of[p.tile]);
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return write_name();
}

}  // namespace tracetable
