// CheckTableMeta: whether a table's metadata and resource table describe
// something the ingest could have written, checked before any count, size
// or time in them is used (to size memory, to loop over time or levels, to
// index another list).
//
// A table that fails is corrupt (store/corruption.h): every command then
// stops with that error instead of allocating without bound, spinning over an
// impossible span or answering from contradicting numbers.
#ifndef TRACETABLE_STORE_META_CHECK_H_
#define TRACETABLE_STORE_META_CHECK_H_

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "format/tracetable.pb.h"

namespace tracetable {

// Strings per "S" record (the writer fills every chunk but the last).
inline constexpr uint32_t kStringsPerChunk = 65536;

absl::Status CheckTableMeta(std::string_view path, const proto::TableMeta& meta);
absl::Status CheckResources(std::string_view path, const proto::TableMeta& meta,
                            const proto::ResourceTable& resources);

}  // namespace tracetable

#endif  // TRACETABLE_STORE_META_CHECK_H_
