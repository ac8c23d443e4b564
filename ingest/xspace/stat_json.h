// JSON text for XSpace stats: the reader turns XStat values into the members
// of an event's args object (Event.args_json).
//
// Contract:
//  - Output is always valid JSON: strings are escaped per RFC 8259 and any
//    invalid UTF-8 is replaced by U+FFFD; non-finite doubles become the
//    strings "NaN", "Infinity", "-Infinity" (JSON has no such numbers).
//  - Doubles are printed in the shortest form that reads back to the same
//    double; 64-bit integers as exact decimal text.
//  - bytes_value: base64 text (prefix "base64:") up to kMaxBase64Bytes raw
//    bytes, else a length note "<N bytes>" (bytes stats can hold whole
//    serialized protos; args are for reading, not for round-tripping blobs).
//  - ref_value: the name of the referenced XStatMetadata; a dangling ref is
//    written as "<ref N>" so the value is still visible.
#ifndef TRACETABLE_INGEST_XSPACE_STAT_JSON_H_
#define TRACETABLE_INGEST_XSPACE_STAT_JSON_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "format/json_text.h"
#include "ingest/xspace/wire_reader.h"

namespace tracetable::xspace_json {

inline constexpr size_t kMaxBase64Bytes = 4096;

using xspace_wire::StatMetadataMap;
using xspace_wire::StatView;

// AppendJsonString for text already known to be UTF-8 (proto3 strings, which
// the wire reader checked): the same bytes out, but runs with nothing to
// escape are found 8 bytes at a time.
void AppendUtf8JsonString(std::string* out, std::string_view utf8);

// Appends `v` as a JSON number (or a string for NaN / infinities).
void AppendDouble(std::string* out, double v);

// Appends the value of `stat` as JSON (null when the oneof is unset).
void AppendStatValue(std::string* out, const StatView& stat,
                     const StatMetadataMap& stat_metadata);

// The value of `stat` as plain text (no quotes): strings and refs as is,
// numbers in decimal. Used where a stat names something (step_name).
std::string StatText(const StatView& stat,
                     const StatMetadataMap& stat_metadata);

// The numeric value of `stat` if it has one (double / uint64 / int64).
bool StatNumber(const StatView& stat, double* value);

}  // namespace tracetable::xspace_json

#endif  // TRACETABLE_INGEST_XSPACE_STAT_JSON_H_
