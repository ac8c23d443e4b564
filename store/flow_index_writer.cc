#include "store/flow_index_writer.h"

#include <algorithm>
#include <numeric>
#include <tuple>
#include <vector>

#include "store/run_parts.h"

namespace tracetable {
namespace {

bool IsFlowEvent(EventKind k) {
  return k == EventKind::kFlowStart || k == EventKind::kFlowStep || k == EventKind::kFlowEnd;
}

}  // namespace

FlowIndexWriter::FlowIndexWriter(std::string spill_prefix, size_t memory_bytes)
    : sorter_(std::make_unique<Sorter>(std::move(spill_prefix), PostingOrder{}, memory_bytes / sizeof(Posting))) {}

absl::Status FlowIndexWriter::AddTile(const TileKey& key, const std::vector<TileRow>& rows) {
  // A tile's few ids sorted in place: no hash set built and freed per tile.
  thread_local std::vector<uint32_t> flows;
  flows.clear();
  for (const TileRow& r : rows) {
    if (IsFlowEvent(r.kind) && r.flow_id) flows.push_back(r.flow_id);
    if (r.flow_out) flows.push_back(r.flow_out);
    if (r.flow_in) flows.push_back(r.flow_in);
  }
  if (flows.empty()) return absl::OkStatus();
  std::sort(flows.begin(), flows.end());
  flows.erase(std::unique(flows.begin(), flows.end()), flows.end());
  std::lock_guard<std::mutex> lock(mu_);
  if (tiles_.size() == UINT32_MAX) return absl::ResourceExhaustedError("more than 2^32 tiles with flows");
  const auto tile = static_cast<uint32_t>(tiles_.size());
  tiles_.push_back(Tile{key.start, key.track, key.level});
  for (uint32_t f : flows) {
    if (absl::Status s = sorter_->Add(Posting{f, tile}); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status FlowIndexWriter::Finish(size_t read_budget, const std::vector<PutFn>& puts,
                                     proto::FlowIndexInfo* info) {
  if (puts.empty()) return absl::InternalError("flow index: no writer");
  *info = proto::FlowIndexInfo();
  const uint64_t total = sorter_->size();
  info->set_postings(total);
  std::vector<uint32_t> by_rank(tiles_.size());
  std::iota(by_rank.begin(), by_rank.end(), 0u);
  std::sort(by_rank.begin(), by_rank.end(), [&](uint32_t a, uint32_t b) {
    return std::tie(tiles_[a].track, tiles_[a].level, tiles_[a].start) <
           std::tie(tiles_[b].track, tiles_[b].level, tiles_[b].start);
  });
  std::vector<uint32_t> rank_of(tiles_.size());
  for (uint32_t r = 0; r < by_rank.size(); ++r) rank_of[by_rank[r]] = r;
  // As ranks before the sort, each flow's postings come in key order;
  // spilled runs were sorted as they were, so their flows' need a sort.
  const bool as_ranks = sorter_->RewriteIfNoneSpilled([&](Posting& p) { p.tile = rank_of[p.tile]; });
  absl::StatusOr<std::vector<Sorter::Group>> groups = sorter_->SortGroups();
  if (!groups.ok()) return groups.status();
  const size_t parts = puts.size();
  // Every writer reads a spilled run through a buffer of its own.
  const size_t buffer_records = std::clamp<size_t>(
      read_budget / (parts * std::max(sorter_->runs(), 1) * sizeof(Posting)), 1024, 1 << 16);
  // Writer p takes blocks [first[p], first[p + 1]): about an equal share of
  // the postings.
  std::vector<size_t> first(parts + 1, groups->size());
  first[0] = 0;
  uint64_t sum = 0;
  for (size_t p = 1, g = 0; p < parts; ++p) {
    while (g < groups->size() && sum * parts < total * p) sum += (*groups)[g++].records;
    first[p] = g;
  }
  std::vector<PartInfo> part_info(parts);
  std::vector<absl::Status> status(parts);
  RunParts(parts, "tt-flows", [&](size_t p) {
    for (size_t g = first[p]; g < first[p + 1] && status[p].ok(); ++g) {
      status[p] = WriteBlock((*groups)[g], buffer_records, by_rank, rank_of, as_ranks, puts[p], &part_info[p]);
    }
  });
  sorter_->Clear();
  for (size_t p = 0; p < parts; ++p) {
    if (!status[p].ok()) return status[p];
    info->set_blocks(info->blocks() + part_info[p].blocks);
    info->set_bytes(info->bytes() + part_info[p].bytes);
    info->set_flows(info->flows() + part_info[p].flows);
  }
  return absl::OkStatus();
}

absl::Status FlowIndexWriter::WriteBlock(const Sorter::Group& group, size_t buffer_records,
                                         const std::vector<uint32_t>& by_rank, const std::vector<uint32_t>& rank_of,
                                         bool as_ranks, const PutFn& put, PartInfo* info) {
  proto::FlowTiles block;
  std::vector<uint32_t> ranks;  // one flow's tiles
  uint32_t flow = 0;
  auto end_flow = [&]() {
    if (ranks.empty()) return;
    if (!as_ranks) std::sort(ranks.begin(), ranks.end());
    block.add_slot(flow & ((1u << kFlowBlockShift) - 1));
    block.add_count(static_cast<uint32_t>(ranks.size()));
    for (uint32_t r : ranks) {
      const Tile& t = tiles_[by_rank[r]];
      block.add_track(t.track);
      block.add_level(t.level);
      block.add_start(t.start);
    }
    ++info->flows;
    ranks.clear();
  };
  absl::Status st = sorter_->ReadGroup(group, buffer_records, [&](absl::Span<const Posting> span) {
    for (const Posting& p : span) {
      if (p.flow != flow) {
        end_flow();
        flow = p.flow;
      }
      ranks.push_back(as_ranks ? p.tile : rank_of[p.tile]);
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  end_flow();
  std::string value = block.SerializeAsString();
  ++info->blocks;
  info->bytes += value.size();
  return put(FlowBlockKey(static_cast<uint32_t>(group.key)), std::move(value));
}

}  // namespace tracetable
