// Constants of the on-disk format shared by the writer and the reader.
#ifndef TRACETABLE_STORE_TABLE_FORMAT_H_
#define TRACETABLE_STORE_TABLE_FORMAT_H_

#include <cstdint>

#define TRACETABLE_VERSION "0.1.0"

namespace tracetable {

// Bump on any change to keys or values; docs/format.md says what each means.
constexpr uint32_t kFormatVersion = 8;
// Version 5 differs only in how argument blocks and memory segments hold
// integers, which their decoders read in either form (format/args_codec.h,
// format/memory_segment_codec.h); versions 5 and 6 only in that they hold
// every flow id as a string id, which version 7 reads the same
// (format/flow_id.h); version 7 only in that every name's search postings
// have keys of their own (no "P" name groups), which version 8 reads the same.
constexpr uint32_t kOldestSortedFilesVersion = 5;
// The first version with numeric flow ids (format/flow_id.h); older tables
// hold a decimal flow id as a string.
constexpr uint32_t kNumericFlowIdsVersion = 7;

// tids written for tracks that have none of their own (async lanes,
// counters, threads with string tids).
constexpr int64_t kSyntheticTidBase = 1'000'000'000;

}  // namespace tracetable

#endif  // TRACETABLE_STORE_TABLE_FORMAT_H_
