// The difference coding of a MemorySegment's columns (format version 6;
// docs/format.md, "MemorySegment"). Most columns count up row by row (event
// sequence numbers, times, event ids, the bytes in use), so a segment stores
// each value's difference from the one before, which takes a byte or two
// where the value took five to eight, and LevelDB's Snappy compresses runs
// of them.
//
// Contract: DecodeSegmentColumns(EncodeSegmentColumns(s)) == s for any
// segment whose allocation columns have equal lengths; arithmetic wraps at
// 64 bits, so any values round-trip. A segment with `coding` 0 (version 5,
// and segments a run rewrites) is left as it is; an unknown coding or
// columns of different lengths are a DataLoss error, never a guess.
#ifndef TRACETABLE_FORMAT_MEMORY_SEGMENT_CODEC_H_
#define TRACETABLE_FORMAT_MEMORY_SEGMENT_CODEC_H_

#include "absl/status/status.h"
#include "format/tracetable.pb.h"

namespace tracetable {

inline constexpr uint32_t kSegmentDifferences = 1;

// Plain columns to differences; sets `coding`.
void EncodeSegmentColumns(proto::MemorySegment* s);

// Differences back to plain columns; clears `coding`.
absl::Status DecodeSegmentColumns(proto::MemorySegment* s);

}  // namespace tracetable

#endif  // TRACETABLE_FORMAT_MEMORY_SEGMENT_CODEC_H_
