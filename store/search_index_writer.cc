#include "store/search_index_writer.h"

#include <algorithm>
#include <numeric>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "boost/sort/pdqsort/pdqsort.hpp"
#include "format/search_group_codec.h"
#include "store/run_parts.h"

namespace tracetable {
namespace {

// Own postings per chunk: big enough that LevelDB's per-key cost vanishes
// next to 1-2 byte postings, small enough that a reader seeking into a
// common name decodes little it does not need.
constexpr size_t kChunkPostings = 1024;
// A name posted in at most this many tiles goes in its group's "P" key
// (format/search_group_codec.h) instead of keys of its own: a key costs
// ~25 bytes on disk, as much as a dozen postings. It bounds what a reader
// decodes to find one name: 64 names of up to 128 postings.
constexpr size_t kGroupPostings = 128;

}  // namespace

SearchIndexWriter::SearchIndexWriter(std::string spill_prefix, size_t memory_bytes)
    : spill_prefix_(std::move(spill_prefix)), memory_bytes_(memory_bytes) {
  Partition({}, 1);
}

void SearchIndexWriter::Partition(const std::vector<uint32_t>& weights, int parts) {
  parts = std::max(parts, 1);
  const uint64_t total = std::accumulate(weights.begin(), weights.end(), uint64_t{0});
  parts_.clear();
  uint64_t sum = 0;
  uint32_t name = 0;
  for (int p = 0; p < parts; ++p) {
    // The first name past p/parts of the weight.
    while (name < weights.size() && sum * parts < total * p) sum += weights[name++];
    auto part = std::make_unique<Part>();
    // A group of names ("P" key) is written by one partition.
    part->first_name = name >> kSearchGroupShift << kSearchGroupShift;
    part->sorter = std::make_unique<ExternalSorter<Posting, PostingOrder>>(
        absl::StrCat(spill_prefix_, p), PostingOrder{}, memory_bytes_ / parts / sizeof(Posting));
    // Finish() sorts the partitions at once, each on a thread of its own.
    if (parts > 1) part->sorter->SortOnCallingThread();
    parts_.push_back(std::move(part));
  }
}

absl::Status SearchIndexWriter::AddTile(const TileKey& key, int64_t tile_start, const std::vector<TileRow>& rows,
                                        Scratch* scratch) {
  if (++scratch->tile_ == 0) {  // the stamps wrapped: forget them all
    std::fill(scratch->last_tile_.begin(), scratch->last_tile_.end(), 0);
    scratch->tile_ = 1;
  }
  const uint32_t stamp = scratch->tile_;
  std::vector<uint32_t>& seen = scratch->last_tile_;
  std::vector<uint32_t>& names = scratch->names_;
  names.clear();
  int64_t end = tile_start, last = tile_start;
  // A table of many names (gen: 65k) keeps `seen` out of the first-level
  // caches, and each row's check waited on its line (38% of this
  // function's samples): ask for the lines a few rows ahead.
  constexpr size_t kAhead = 32;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i + kAhead < rows.size() && rows[i + kAhead].name < seen.size()) {
      __builtin_prefetch(&seen[rows[i + kAhead].name]);
    }
    const TileRow& r = rows[i];
    if (r.kind == EventKind::kCounter || r.name == 0) continue;
    end = std::max(end, r.ts + r.dur);
    last = std::max(last, r.ts);
    if (r.name >= seen.size()) seen.resize(std::max<size_t>(size_t{r.name} + 1, seen.size() * 2));
    if (seen[r.name] == stamp) continue;
    seen[r.name] = stamp;
    names.push_back(r.name);
  }
  if (names.empty()) return absl::OkStatus();
  uint32_t index;
  {
    std::lock_guard<std::mutex> lock(tiles_mu_);
    if (tiles_.size() == UINT32_MAX) return absl::ResourceExhaustedError("more than 2^32 tiles to index");
    index = static_cast<uint32_t>(tiles_.size());
    tiles_.push_back(Tile{key.start, static_cast<uint64_t>(end - tile_start),
                          static_cast<uint64_t>(last - tile_start), key.track, key.level});
  }
  // The sorters order postings whole: the order they are added in is free.
  for (size_t p = 0; p < parts_.size(); ++p) {
    const uint64_t first = parts_[p]->first_name;
    const uint64_t next = p + 1 == parts_.size() ? uint64_t{1} << 32 : parts_[p + 1]->first_name;
    std::lock_guard<std::mutex> lock(parts_[p]->mu);
    for (const uint32_t name : names) {
      if (name < first || name >= next) continue;
      if (absl::Status s = parts_[p]->sorter->Add(Posting{name, index}); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

absl::Status SearchIndexWriter::WriteDirectory(const std::vector<uint32_t>& by_rank, const PutFn& put,
                                               proto::SearchIndexInfo* info) {
  constexpr size_t kBlock = size_t{1} << kSearchTilesBlockShift;
  for (size_t first = 0; first < by_rank.size(); first += kBlock) {
    proto::SearchTiles block;
    const size_t end = std::min(by_rank.size(), first + kBlock);
    // Times in the block's largest common unit: whole ns or us take 3 to 6
    // fewer digits (gen 1M: 67 -> 20 KB).
    uint64_t unit = 0, prev = 0;
    for (size_t r = first; r < end; ++r) {
      const Tile& t = tiles_[by_rank[r]];
      unit = std::gcd(std::gcd(unit, t.start - prev), std::gcd(t.reach, t.last));
      prev = t.start;
    }
    if (unit > 1) block.set_unit(unit);
    unit = std::max<uint64_t>(unit, 1);
    prev = 0;
    for (size_t r = first; r < end; ++r) {
      const Tile& t = tiles_[by_rank[r]];
      block.add_start_delta((t.start - prev) / unit);
      prev = t.start;
      block.add_track(t.track);
      block.add_level(t.level);
      block.add_reach(t.reach / unit);
      block.add_last(t.last / unit);
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

absl::Status SearchIndexWriter::Finish(size_t read_budget, const std::vector<PutFn>& puts,
                                       const std::vector<PutFn>& group_puts, proto::SearchIndexInfo* info) {
  if (puts.size() != parts_.size() || group_puts.size() != parts_.size()) {
    return absl::InternalError(absl::StrCat("search index: ", puts.size(), " and ", group_puts.size(),
                                            " writers for ", parts_.size(), " partitions"));
  }
  *info = proto::SearchIndexInfo();
  uint64_t postings = 0;
  for (const auto& part : parts_) postings += part->sorter->size();
  info->set_postings(postings);
  info->set_tiles(tiles_.size());
  std::vector<uint32_t> by_rank(tiles_.size());
  std::iota(by_rank.begin(), by_rank.end(), 0u);
  std::sort(by_rank.begin(), by_rank.end(), [&](uint32_t a, uint32_t b) {
    return std::tie(tiles_[a].start, tiles_[a].track, tiles_[a].level) <
           std::tie(tiles_[b].start, tiles_[b].track, tiles_[b].level);
  });
  if (absl::Status s = WriteDirectory(by_rank, puts[0], info); !s.ok()) return s;
  std::vector<uint32_t> rank_of(tiles_.size());
  for (uint32_t r = 0; r < by_rank.size(); ++r) rank_of[by_rank[r]] = r;

  std::vector<PartInfo> part_info(parts_.size());
  std::vector<absl::Status> status(parts_.size());
  const size_t part_budget = read_budget / parts_.size();
  RunParts(parts_.size(), "tt-search", [&](size_t p) {
    status[p] = WriteChunks(*parts_[p], part_budget, by_rank, rank_of, puts[p], group_puts[p], &part_info[p]);
  });
  for (size_t p = 0; p < parts_.size(); ++p) {
    if (!status[p].ok()) return status[p];
    info->set_chunks(info->chunks() + part_info[p].chunks);
    info->set_groups(info->groups() + part_info[p].groups);
    info->set_bytes(info->bytes() + part_info[p].bytes);
  }
  return absl::OkStatus();
}

absl::Status SearchIndexWriter::WriteChunks(Part& part, size_t read_budget, const std::vector<uint32_t>& by_rank,
                                            const std::vector<uint32_t>& rank_of, const PutFn& put,
                                            const PutFn& group_put, PartInfo* info) {
  auto start = [&](uint32_t rank) { return tiles_[by_rank[rank]].start; };
  auto end = [&](uint32_t rank) { return tiles_[by_rank[rank]].start + tiles_[by_rank[rank]].reach; };

  // Postings hold tiles in AddTile order; as ranks before the sort, each
  // name's come in rank order and need no sort of their own (gen 10M: ~240
  // samples, a third of writing the index). Spilled runs were sorted as
  // they were.
  const bool as_ranks = part.sorter->RewriteIfNoneSpilled([&](Posting& p) { p.tile = rank_of[p.tile]; });
  // Rare names' postings, a group of names at a time.
  std::vector<SearchGroupEntry> group;
  auto end_group = [&]() -> absl::Status {
    if (group.empty()) return absl::OkStatus();
    const uint32_t g = group[0].name >> kSearchGroupShift;
    std::string value = EncodeSearchNameGroup(g, group);
    ++info->groups;
    info->bytes += value.size();
    group.clear();
    return group_put(SearchGroupKey(g), std::move(value));
  };
  // One name's postings as ranks, then its chunks.
  std::vector<uint32_t> ranks;
  uint32_t name = 0;
  auto write_name = [&]() -> absl::Status {
    if (ranks.empty()) return absl::OkStatus();
    // Integers: the branchless pdqsort (gen 10M: 1.57% -> 1.21% of samples).
    if (!as_ranks) boost::sort::pdqsort_branchless(ranks.begin(), ranks.end());
    if (ranks.size() <= kGroupPostings) {
      if (!group.empty() && group[0].name >> kSearchGroupShift != name >> kSearchGroupShift) {
        if (absl::Status s = end_group(); !s.ok()) return s;
      }
      group.push_back(SearchGroupEntry{name, ranks});
      ranks.clear();
      return absl::OkStatus();
    }
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
      ++info->chunks;
      info->bytes += value.size();
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
  absl::Status st = part.sorter->Merge(read_budget, [&](const Posting& p) -> absl::Status {
    if (p.name != name) {
      if (absl::Status s = write_name(); !s.ok()) return s;
      name = p.name;
    }
    ranks.push_back(as_ranks ? p.tile : rank_of[p.tile]);
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  if (absl::Status s = write_name(); !s.ok()) return s;
  return end_group();
}

}  // namespace tracetable
