#include "store/flow_index_writer.h"

#include <algorithm>
#include <tuple>
#include <vector>

namespace tracetable {
namespace {

bool IsFlowEvent(EventKind k) {
  return k == EventKind::kFlowStart || k == EventKind::kFlowStep || k == EventKind::kFlowEnd;
}

}  // namespace

bool FlowIndexWriter::PostingLess(const Posting& a, const Posting& b) {
  return std::tie(a.flow, a.track, a.level, a.start) < std::tie(b.flow, b.track, b.level, b.start);
}

FlowIndexWriter::FlowIndexWriter(std::string spill_prefix, size_t memory_bytes)
    : sorter_(std::make_unique<ExternalSorter<Posting, LessFn<PostingLess>>>(
          std::move(spill_prefix), LessFn<PostingLess>{}, memory_bytes / sizeof(Posting))) {}

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
  for (uint32_t f : flows) {
    if (absl::Status s = sorter_->Add(Posting{f, key.track, key.start, key.level}); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status FlowIndexWriter::Finish(size_t read_budget, const PutFn& put, proto::FlowIndexInfo* info) {
  *info = proto::FlowIndexInfo();
  info->set_postings(sorter_->size());
  proto::FlowTiles block;
  uint32_t block_id = 0;
  uint32_t last_flow = 0;
  bool any = false;
  auto flush = [&]() -> absl::Status {
    if (block.slot_size() == 0) return absl::OkStatus();
    std::string value = block.SerializeAsString();
    info->set_blocks(info->blocks() + 1);
    info->set_bytes(info->bytes() + value.size());
    block.Clear();
    return put(FlowBlockKey(block_id), std::move(value));
  };
  absl::Status st = sorter_->Merge(read_budget, [&](const Posting& p) -> absl::Status {
    if (!any || p.flow != last_flow) {
      if ((p.flow >> kFlowBlockShift) != block_id) {
        if (absl::Status s = flush(); !s.ok()) return s;
        block_id = p.flow >> kFlowBlockShift;
      }
      block.add_slot(p.flow & ((1u << kFlowBlockShift) - 1));
      block.add_count(0);
      info->set_flows(info->flows() + 1);
      last_flow = p.flow;
      any = true;
    }
    block.set_count(block.count_size() - 1, block.count(block.count_size() - 1) + 1);
    block.add_track(p.track);
    block.add_level(p.level);
    block.add_start(p.start);
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return flush();
}

}  // namespace tracetable
