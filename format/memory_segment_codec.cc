#include "format/memory_segment_codec.h"

#include <cstdint>
#include <type_traits>

namespace tracetable {
namespace {

template <typename Column>
void ToDifferences(Column* c) {
  uint64_t prev = 0;
  for (auto& v : *c) {
    const uint64_t x = static_cast<uint64_t>(v);
    v = static_cast<std::remove_reference_t<decltype(v)>>(x - prev);
    prev = x;
  }
}

template <typename Column>
void FromDifferences(Column* c) {
  uint64_t sum = 0;
  for (auto& v : *c) {
    sum += static_cast<uint64_t>(v);
    v = static_cast<std::remove_reference_t<decltype(v)>>(sum);
  }
}

}  // namespace

// A freed allocation's free_seq and free_ts are kept relative to its own
// alloc_seq and alloc_ts (free_seq stays 0 for never freed: a free comes
// after its allocation, so a freed row's difference is at least 1).
void EncodeSegmentColumns(proto::MemorySegment* s) {
  for (int i = 0; i < s->free_seq_size(); ++i) {
    if (s->free_seq(i) == 0) continue;
    s->set_free_seq(i, s->free_seq(i) - s->alloc_seq(i));
    s->set_free_ts(i, static_cast<int64_t>(static_cast<uint64_t>(s->free_ts(i)) - static_cast<uint64_t>(s->alloc_ts(i))));
  }
  ToDifferences(s->mutable_in_use());
  ToDifferences(s->mutable_alloc_seq());
  ToDifferences(s->mutable_alloc_ts());
  ToDifferences(s->mutable_event_id());
  s->set_coding(kSegmentDifferences);
}

absl::Status DecodeSegmentColumns(proto::MemorySegment* s) {
  if (s->coding() == 0) return absl::OkStatus();
  if (s->coding() != kSegmentDifferences) return absl::DataLossError("memory segment: unknown column coding");
  const int n = s->alloc_seq_size();
  if (s->alloc_ts_size() != n || s->free_seq_size() != n || s->free_ts_size() != n) {
    return absl::DataLossError("memory segment: allocation columns of different lengths");
  }
  FromDifferences(s->mutable_in_use());
  FromDifferences(s->mutable_alloc_seq());
  FromDifferences(s->mutable_alloc_ts());
  FromDifferences(s->mutable_event_id());
  for (int i = 0; i < n; ++i) {
    if (s->free_seq(i) == 0) continue;
    s->set_free_seq(i, s->alloc_seq(i) + s->free_seq(i));
    s->set_free_ts(i, static_cast<int64_t>(static_cast<uint64_t>(s->alloc_ts(i)) + static_cast<uint64_t>(s->free_ts(i))));
  }
  s->set_coding(0);
  return absl::OkStatus();
}

}  // namespace tracetable
