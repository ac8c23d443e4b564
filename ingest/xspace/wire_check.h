// Locates where protobuf bytes stop decoding as a given message type.
//
// Generated parsers only say "failed"; a user with a corrupt .xplane.pb wants
// the byte offset. This walks the wire format guided by the message's
// descriptor and reports the first place the generated parser would reject:
// a malformed tag or varint, a length running past its enclosing message, an
// end-group with no group, a proto3 string that is not UTF-8, or nesting
// deeper than protobuf's default recursion limit.
//
// Contract: only used on the error path (it needs the bytes in memory), so
// it favours clarity over speed. Returns nullopt if it finds no fault.
#ifndef TRACETABLE_INGEST_XSPACE_WIRE_CHECK_H_
#define TRACETABLE_INGEST_XSPACE_WIRE_CHECK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "google/protobuf/descriptor.h"

namespace tracetable::xspace_wire {

struct WireFault {
  uint64_t offset = 0;  // from the start of `bytes`
  std::string what;
};

std::optional<WireFault> FindWireFault(std::string_view bytes,
                                       const google::protobuf::Descriptor* type);

}  // namespace tracetable::xspace_wire

#endif  // TRACETABLE_INGEST_XSPACE_WIRE_CHECK_H_
